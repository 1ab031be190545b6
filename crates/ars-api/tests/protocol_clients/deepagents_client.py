"""A `deepagents` main agent whose async subagent is an ARS subagent reached through
/langgraph: `AsyncSubAgent(graph_id="researcher", url=ARS_URL + "/langgraph")`, the key in
`LANGGRAPH_API_KEY` (the only way deepagents passes one). The main agent's model is a local
scripted one that starts a task, checks it until it succeeds, sends it a follow-up, checks
again, cancels it and lists the tasks; the script asserts what each tool answered.

Env: ARS_URL, ARS_TOKEN (owns the subagent `researcher`: it calls `write_file`, then after
1.5 s answers "researched: <input>"), ARS_OTHER_TOKEN (another user).
"""

import faulthandler
import json
import os
import re
import time
import uuid
from typing import Any

# A hang fails the script (with every thread's stack) instead of stalling the test.
faulthandler.dump_traceback_later(150, exit=True)

url = os.environ["ARS_URL"] + "/langgraph"
os.environ["LANGGRAPH_API_KEY"] = os.environ["ARS_TOKEN"]

from deepagents import AsyncSubAgent, create_deep_agent  # noqa: E402
from langchain_core.language_models.chat_models import BaseChatModel  # noqa: E402
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage  # noqa: E402
from langchain_core.outputs import ChatGeneration, ChatResult  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph_sdk import get_sync_client  # noqa: E402
from langgraph_sdk.errors import NotFoundError  # noqa: E402

QUESTION = "Find out what 2+2 is."
FOLLOW_UP = "Also say why."
MAX_CHECKS = 30


def status_of(content: Any) -> dict:
    """A check_async_task answer: JSON text (or a first text block holding it)."""
    if isinstance(content, list):
        content = content[0]["text"] if isinstance(content[0], dict) else content[0]
    try:
        return json.loads(content)
    except (TypeError, ValueError):
        return {"status": None, "raw": content}


def tool_results(messages: list[BaseMessage]) -> list[tuple[str, Any]]:
    """(tool name, answer) of each tool call so far, in order."""
    names = {
        call["id"]: call["name"]
        for m in messages
        if isinstance(m, AIMessage)
        for call in m.tool_calls
    }
    return [(names.get(m.tool_call_id, "?"), m.content) for m in messages if isinstance(m, ToolMessage)]


class ScriptedChatModel(BaseChatModel):
    """Drives the async subagent tools in a fixed order, deciding from the answers so far."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any):  # the script ignores the tools' schemas
        return self

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        results = tool_results(messages)
        step = len(results)

        def call(name: str, **args: Any) -> AIMessage:
            return AIMessage(
                content="",
                tool_calls=[{"name": name, "args": args, "id": f"call_{step}_{name}", "type": "tool_call"}],
            )

        def stop(why: str) -> AIMessage:
            return AIMessage(content=f"Stopped: {why}")

        if not results:
            return call("start_async_task", description=QUESTION, subagent_type="researcher")
        found = re.search(r"task_id: (\S+)", str(results[0][1]))
        if not found:
            return stop(f"start failed: {results[0][1]}")
        task_id = found.group(1)
        names = [name for name, _ in results]
        last_name, last = results[-1]

        if "update_async_task" not in names:
            if last_name == "check_async_task":
                status = status_of(last).get("status")
                if status == "success":
                    return call("update_async_task", task_id=task_id, message=FOLLOW_UP)
                if status not in ("pending", "running"):
                    return stop(f"check answered {last!r}")
                if names.count("check_async_task") >= MAX_CHECKS:
                    return stop(f"still {status} after {MAX_CHECKS} checks")
                time.sleep(0.25)
            return call("check_async_task", task_id=task_id)
        if last_name == "update_async_task":
            return call("check_async_task", task_id=task_id)
        if "cancel_async_task" not in names:
            return call("cancel_async_task", task_id=task_id)
        if "list_async_tasks" not in names:
            return call("list_async_tasks")
        return AIMessage(content="All done.")

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])


subagent: AsyncSubAgent = {
    "name": "researcher",
    "description": "Researches questions in the background.",
    "graph_id": "researcher",
    "url": url,
}
agent = create_deep_agent(model=ScriptedChatModel(), subagents=[subagent], checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "parent-" + uuid.uuid4().hex[:8]}}
state = agent.invoke({"messages": [{"role": "user", "content": "Ask the researcher what 2+2 is."}]}, config)

messages = state["messages"]
final = messages[-1]
results = tool_results(messages)
trace = "\n".join(f"{name}: {content}" for name, content in results)
assert isinstance(final, AIMessage) and final.content == "All done.", f"{final.content}\n{trace}"
names = [name for name, _ in results]

# start: a task, whose id is the subagent's thread on ARS.
assert names[0] == "start_async_task", trace
start = str(results[0][1])
assert start.startswith("Launched async subagent. task_id: "), start
task_id = start.rsplit(" ", 1)[1]

# check until success: running first (the subagent takes >= 1.5 s), then its answer.
update_at = names.index("update_async_task")
checks = [status_of(content) for _, content in results[1:update_at]]
assert names[1:update_at] == ["check_async_task"] * len(checks), trace
statuses = [c["status"] for c in checks]
assert "running" in statuses, statuses
assert set(statuses[:-1]) <= {"pending", "running"}, statuses
assert statuses[-1] == "success", statuses
assert checks[-1]["thread_id"] == task_id, checks[-1]
assert f"researched: {QUESTION}" in checks[-1]["result"], checks[-1]

# update, check, cancel, list.
assert names[update_at:] == [
    "update_async_task",
    "check_async_task",
    "cancel_async_task",
    "list_async_tasks",
], trace
update, check, cancel, listed = (content for _, content in results[update_at:])
assert str(update) == f"Updated async subagent. task_id: {task_id}", update
assert status_of(check)["status"] in ("pending", "running"), check
assert str(cancel) == f"Cancelled async subagent task: {task_id}", cancel
assert "1 tracked task(s)" in str(listed) and task_id in str(listed), listed
assert "status: cancelled" in str(listed), listed
assert state["async_tasks"][task_id]["status"] == "cancelled", state["async_tasks"]

# On ARS: the subagent's thread, its first run answered, the follow-up cancelled.
client = get_sync_client(url=url, api_key=os.environ["ARS_TOKEN"], timeout=60)
thread = client.threads.get(task_id)
assert thread["metadata"]["subagent_name"] == "researcher", thread
deadline = time.time() + 30
while True:
    runs = client.runs.list(task_id)
    if runs[0]["status"] not in ("pending", "running") or time.time() > deadline:
        break
    time.sleep(0.2)
assert [r["status"] for r in runs] == ["interrupted", "success"], runs
assert any(
    m["type"] == "ai" and m["content"] == f"researched: {QUESTION}"
    for m in client.threads.get(task_id)["values"]["messages"]
), thread

# Another user can't see the task.
other = get_sync_client(url=url, api_key=os.environ["ARS_OTHER_TOKEN"], timeout=60)
try:
    other.threads.get(task_id)
    raise AssertionError("another user's subagent thread must not exist for them")
except NotFoundError:
    pass

print("deepagents client: ok")
