"""The official `a2a-sdk` (A2A v1.0, JSON-RPC) client against ARS's /a2a/<agent>: the agent
card, a message answered whole and streamed, a context continued, tasks read back and listed,
a background task cancelled, errors as the SDK's typed exceptions, and another user's view.

Env: ARS_URL, ARS_TOKEN (owns the scripted agents `echo` and `slow`, the latter answering after
3 s), ARS_OTHER_TOKEN (another user, who owns nothing).
"""

import asyncio
import faulthandler
import os
import uuid

import httpx
from a2a.client import A2ACardResolver, AgentCardResolutionError, ClientConfig, create_client
from a2a.client.errors import A2AClientError
from a2a.helpers.proto_helpers import get_artifact_text, get_message_text, new_text_message
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import A2AError, TaskNotCancelableError, TaskNotFoundError

# A hang fails the script (with every thread's stack) instead of stalling the test.
faulthandler.dump_traceback_later(150, exit=True)

ECHO = os.environ["ARS_URL"] + "/a2a/echo"
SLOW = os.environ["ARS_URL"] + "/a2a/slow"


def heard(text, turns):
    return f"heard {text} after {turns} user turns"


def said(text, context_id=None):
    return SendMessageRequest(message=new_text_message(text, role=Role.ROLE_USER, context_id=context_id))


def state(task):
    return TaskState.Name(task.status.state)


def texts(task):
    """What a task says: its artifacts' texts and its status message's."""
    out = [get_artifact_text(a, delimiter="") for a in task.artifacts]
    if task.status.HasField("message"):
        out.append(get_message_text(task.status.message, delimiter=""))
    return out


async def one_task(client, request):
    """A non-streaming send: exactly one answer, a Task."""
    events = [e async for e in client.send_message(request)]
    assert len(events) == 1 and events[0].HasField("task"), events
    return events[0].task


async def main():
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {os.environ['ARS_TOKEN']}"}, timeout=60)
    bob_http = httpx.AsyncClient(headers={"Authorization": f"Bearer {os.environ['ARS_OTHER_TOKEN']}"}, timeout=60)

    # The card.
    card = await A2ACardResolver(http, ECHO).get_agent_card()
    assert "echo" in card.name.lower(), card.name
    assert card.capabilities.streaming, card.capabilities
    assert any(
        i.protocol_binding == "JSONRPC" and i.protocol_version == "1.0" for i in card.supported_interfaces
    ), card.supported_interfaces
    assert any(
        s.HasField("http_auth_security_scheme") and s.http_auth_security_scheme.scheme.lower() == "bearer"
        for s in card.security_schemes.values()
    ), card.security_schemes

    # A message answered whole: a completed task.
    client = await create_client(ECHO, client_config=ClientConfig(httpx_client=http, streaming=False))
    first = await one_task(client, said("hello"))
    assert state(first) == "TASK_STATE_COMPLETED", first
    assert heard("hello", 1) in texts(first), first
    assert first.id and first.context_id, first

    # Streamed: status updates, the text in artifact updates, completed last.
    streaming = await create_client(ECHO, client_config=ClientConfig(httpx_client=http))
    events = [e async for e in streaming.send_message(said("stream me"))]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[-1] == "status_update", kinds
    assert TaskState.Name(events[-1].status_update.status.state) == "TASK_STATE_COMPLETED", events[-1]
    streamed = "".join(
        get_artifact_text(e.artifact_update.artifact, delimiter="") for e in events if e.HasField("artifact_update")
    )
    assert streamed == heard("stream me", 1), (streamed, kinds)
    stream_task = events[-1].status_update.task_id
    assert stream_task and stream_task != first.id, events[-1]

    # The same context continued: a new task that sees the earlier turn.
    second = await one_task(client, said("again", context_id=first.context_id))
    assert second.context_id == first.context_id and second.id != first.id, second
    assert state(second) == "TASK_STATE_COMPLETED", second
    assert heard("again", 2) in texts(second), second

    # Read back and listed.
    got = await client.get_task(GetTaskRequest(id=first.id))
    assert got.id == first.id and state(got) == "TASK_STATE_COMPLETED", got
    assert heard("hello", 1) in texts(got), got
    listed = await client.list_tasks(ListTasksRequest(context_id=first.context_id))
    assert sorted(t.id for t in listed.tasks) == sorted([first.id, second.id]), listed
    assert all(t.context_id == first.context_id for t in listed.tasks), listed

    # A background task on the slow agent, cancelled.
    slow = await create_client(SLOW, client_config=ClientConfig(httpx_client=http, streaming=False))
    working = await one_task(
        slow,
        SendMessageRequest(
            message=new_text_message("take your time", role=Role.ROLE_USER),
            configuration=SendMessageConfiguration(return_immediately=True),
        ),
    )
    assert state(working) in ("TASK_STATE_WORKING", "TASK_STATE_SUBMITTED"), working
    cancelled = await slow.cancel_task(CancelTaskRequest(id=working.id))
    assert cancelled.id == working.id and state(cancelled) == "TASK_STATE_CANCELED", cancelled
    try:
        await slow.cancel_task(CancelTaskRequest(id=working.id))
        raise AssertionError("a cancelled task can't be cancelled again")
    except TaskNotCancelableError:
        pass
    assert state(await slow.get_task(GetTaskRequest(id=working.id))) == "TASK_STATE_CANCELED"
    try:
        await client.get_task(GetTaskRequest(id=str(uuid.uuid4())))
        raise AssertionError("an unknown task must not be found")
    except TaskNotFoundError:
        pass

    # Another user: no card, and none of alice's tasks through a card fetched with her token.
    try:
        await A2ACardResolver(bob_http, ECHO).get_agent_card()
        raise AssertionError("another user's agent card must not resolve")
    except AgentCardResolutionError as e:
        assert e.status_code == 404, repr(e)
    # Alice's endpoint does not exist for Bob at all.
    bob_at_echo = await create_client(card, client_config=ClientConfig(httpx_client=bob_http, streaming=False))
    try:
        await bob_at_echo.get_task(GetTaskRequest(id=first.id))
        raise AssertionError("another user's agent endpoint must not answer")
    except A2AClientError as e:
        assert "404" in str(e), repr(e)
    # Through an agent Bob can use (the built-in one), Alice's tasks are not found.
    shared = await A2ACardResolver(bob_http, os.environ["ARS_URL"] + "/a2a/general-purpose").get_agent_card()
    bob = await create_client(shared, client_config=ClientConfig(httpx_client=bob_http, streaming=False))
    for task_id in (first.id, working.id):
        try:
            await bob.get_task(GetTaskRequest(id=task_id))
            raise AssertionError("another user's task must not be found")
        except TaskNotFoundError:
            pass
    try:
        await bob.cancel_task(CancelTaskRequest(id=working.id))
        raise AssertionError("another user's task must not be cancellable")
    except TaskNotFoundError:
        pass
    try:
        theirs = await bob.list_tasks(ListTasksRequest(context_id=first.context_id))
        assert not theirs.tasks, theirs
    except A2AError:
        pass

    await http.aclose()
    await bob_http.aclose()


asyncio.run(main())
print("a2a client: ok")
