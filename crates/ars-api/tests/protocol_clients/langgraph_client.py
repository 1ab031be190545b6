"""The official `langgraph-sdk` Python client against ARS's /langgraph (the Agent Protocol):
assistants, threads (create, read, merge metadata, search, conflicts, state, delete), runs
(wait, stream in each mode, background runs, join, reject / interrupt while busy, cancel,
stateless), and another user's view of it all.

Env: ARS_URL, ARS_TOKEN (owns the scripted agents `echo`, `slow` and the subagent
`researcher`), ARS_OTHER_TOKEN (another user, who owns nothing).
"""

import faulthandler
import os
import re

import httpx
from langgraph_sdk import get_sync_client
from langgraph_sdk.errors import ConflictError, NotFoundError

# A hang fails the script (with every thread's stack) instead of stalling the test.
faulthandler.dump_traceback_later(150, exit=True)

url = os.environ["ARS_URL"] + "/langgraph"
client = get_sync_client(url=url, api_key=os.environ["ARS_TOKEN"], timeout=60)
other = get_sync_client(url=url, api_key=os.environ["ARS_OTHER_TOKEN"], timeout=60)
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def said(text):
    return {"messages": [{"role": "user", "content": text}]}


def heard(text, turns):
    return f"heard {text} after {turns} user turns"


def answer(values):
    last = values["messages"][-1]
    assert last["type"] == "ai", values
    return last["content"]


def stream(thread_id, assistant, text, mode):
    """The parts of one streamed run, checked for `metadata` first and `end` last."""
    parts = list(client.runs.stream(thread_id, assistant, input=said(text), stream_mode=mode))
    events = [p.event for p in parts]
    assert events[0] == "metadata" and parts[0].data["run_id"], parts[0]
    assert events[-1] == "end", events
    assert "error" not in events, parts
    return parts


def missing(call, what, typed=True):
    """`call` answers 404: the SDK's `NotFoundError`, or (`typed=False`, for join / wait,
    which the SDK reads without typing errors) a bare `httpx.HTTPStatusError`."""
    try:
        call()
    except httpx.HTTPStatusError as e:  # NotFoundError is one too
        assert e.response.status_code == 404, (what, e.response.status_code, e)
        assert not typed or isinstance(e, NotFoundError), (what, type(e))
        return
    raise AssertionError(f"{what} must be a 404")


# Assistants: the caller's agents, subagents included; graph_id = slug, assistant_id = an id.
assistants = client.assistants.search(limit=100)
by_graph = {a["graph_id"]: a for a in assistants}
assert {"echo", "researcher"} <= set(by_graph), assistants
for a in assistants:
    assert UUID.match(a["assistant_id"]), a
echo = by_graph["echo"]
assert [a["assistant_id"] for a in client.assistants.search(graph_id="echo")] == [echo["assistant_id"]]
assert client.assistants.get("echo")["assistant_id"] == echo["assistant_id"]
assert client.assistants.get(echo["assistant_id"])["graph_id"] == "echo"
slow_id = client.assistants.get("slow")["assistant_id"]

# Threads: create, read, merge metadata, search, create again.
thread = client.threads.create(metadata={"purpose": "lg-test"})
tid = thread["thread_id"]
assert UUID.match(tid), thread
got = client.threads.get(tid)
assert got["thread_id"] == tid and got["status"] == "idle", got
assert got["metadata"]["purpose"] == "lg-test", got
updated = client.threads.update(tid, metadata={"more": 1})
assert updated["metadata"]["purpose"] == "lg-test" and updated["metadata"]["more"] == 1, updated
got = client.threads.get(tid)
assert got["metadata"]["purpose"] == "lg-test" and got["metadata"]["more"] == 1, got
assert tid in [t["thread_id"] for t in client.threads.search(metadata={"purpose": "lg-test"})]
assert tid not in [t["thread_id"] for t in client.threads.search(metadata={"purpose": "other"})]
assert client.threads.create(thread_id=tid, if_exists="do_nothing")["thread_id"] == tid
try:
    client.threads.create(thread_id=tid)
    raise AssertionError("creating an existing thread must conflict")
except ConflictError:
    pass

# A run waited for: the thread's values, in LangChain's message dicts.
values = client.runs.wait(tid, "echo", input=said("hello"))
assert values["messages"][0]["type"] == "human", values
assert values["messages"][0]["content"] == "hello", values
assert answer(values) == heard("hello", 1), values
state = client.threads.get_state(tid)
assert len(state["values"]["messages"]) == 2, state
assert state["next"] == [], state
got = client.threads.get(tid)
assert got["status"] == "idle" and answer(got["values"]) == heard("hello", 1), got

# Streams, one mode at a time and two at once.
parts = stream(tid, "echo", "again", "values")
values = [p.data for p in parts if p.event == "values"]
assert values, parts
assert answer(values[-1]) == heard("again", 2), values[-1]
run_ids = [parts[0].data["run_id"]]

parts = stream(tid, "echo", "third", "updates")
updates = [p.data for p in parts if p.event == "updates"]
ai = [
    m
    for update in updates
    for node in update.values()
    for m in (node or {}).get("messages", [])
    if m["type"] == "ai"
]
assert [m["content"] for m in ai] == [heard("third", 3)], updates
run_ids.append(parts[0].data["run_id"])

parts = stream(tid, "echo", "fourth", "messages-tuple")
tuples = [p.data for p in parts if p.event == "messages"]
assert tuples, parts
for t in tuples:
    assert isinstance(t, list) and len(t) == 2, t
    assert isinstance(t[0], dict) and isinstance(t[1], dict), t
assert "".join(chunk["content"] for chunk, _ in tuples) == heard("fourth", 4), tuples
run_ids.append(parts[0].data["run_id"])

parts = stream(tid, "echo", "fifth", ["values", "updates"])
kinds = {p.event for p in parts}
assert {"values", "updates"} <= kinds, kinds
assert answer([p.data for p in parts if p.event == "values"][-1]) == heard("fifth", 5)
run_ids.append(parts[0].data["run_id"])

runs = client.runs.list(tid)
assert len(runs) == 5, runs  # the waited run and the four streamed ones
assert [r["run_id"] for r in runs[:4]] == run_ids[::-1], (runs, run_ids)  # newest first
assert all(r["status"] == "success" for r in runs), runs

# Background runs of a slow agent, on a thread of its own.
busy = client.threads.create(metadata={"purpose": "lg-slow"})["thread_id"]
first = client.runs.create(busy, "slow", input=said("one"))
assert UUID.match(first["run_id"]) and first["status"] in ("pending", "running"), first
assert first["thread_id"] == busy and first["assistant_id"] == slow_id, first
assert client.threads.get(busy)["status"] == "busy"
try:
    client.runs.create(busy, "slow", input=said("two"))
    raise AssertionError("a second run on a busy thread must be rejected")
except ConflictError:
    pass
values = client.runs.join(busy, first["run_id"])
assert answer(values) == "slow answer to one", values
assert client.runs.get(busy, first["run_id"])["status"] == "success"
assert client.threads.get(busy)["status"] == "idle"

# Cancel.
cancelled = client.runs.create(busy, "slow", input=said("stop me"))
client.runs.cancel(busy, cancelled["run_id"], wait=True)
assert client.runs.get(busy, cancelled["run_id"])["status"] == "interrupted"

# multitask_strategy="interrupt": the active run ends interrupted, the new one runs.
interrupted = client.runs.create(busy, "slow", input=said("first"))
winner = client.runs.create(busy, "slow", input=said("second"), multitask_strategy="interrupt")
values = client.runs.join(busy, winner["run_id"])
assert answer(values) == "slow answer to second", values
assert client.runs.get(busy, interrupted["run_id"])["status"] == "interrupted"
assert client.runs.get(busy, winner["run_id"])["status"] == "success"
order = [r["run_id"] for r in client.runs.list(busy)]
assert order == [winner["run_id"], interrupted["run_id"], cancelled["run_id"], first["run_id"]], order

# Stateless.
values = client.runs.wait(None, "echo", input=said("stateless"))
assert answer(values) == heard("stateless", 1), values

# Another user sees none of it.
missing(lambda: other.threads.get(tid), "bob reading alice's thread")
missing(lambda: other.runs.get(tid, run_ids[0]), "bob reading alice's run")
missing(lambda: other.runs.list(tid), "bob listing alice's runs")
missing(lambda: other.runs.join(tid, run_ids[0]), "bob joining alice's run", typed=False)
missing(lambda: other.assistants.get("echo"), "bob reading alice's agent by slug")
missing(lambda: other.assistants.get(echo["assistant_id"]), "bob reading alice's agent by id")
missing(lambda: other.runs.create(tid, "echo", input=said("mine now")), "bob running on alice's thread")
missing(lambda: other.runs.cancel(busy, first["run_id"]), "bob cancelling alice's run")
missing(lambda: other.threads.update(tid, metadata={"bob": 1}), "bob updating alice's thread")
missing(lambda: other.threads.delete(tid), "bob deleting alice's thread")
theirs = {a["assistant_id"] for a in other.assistants.search(limit=100)}
# Built-in agents are everyone's; Alice's own are hers alone.
alices = {a["assistant_id"] for a in assistants if a["graph_id"] in ("echo", "slow", "researcher")}
assert len(alices) == 3 and not theirs & alices, theirs
seen = {t["thread_id"] for t in other.threads.search(limit=100)}
assert tid not in seen and busy not in seen, seen
assert "bob" not in client.threads.get(tid)["metadata"]

# Delete.
client.threads.delete(tid)
missing(lambda: client.threads.get(tid), "a deleted thread")
client.threads.delete(busy)
missing(lambda: client.threads.get(busy), "a deleted thread")

print("langgraph client: ok")
