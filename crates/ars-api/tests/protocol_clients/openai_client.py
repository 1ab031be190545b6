"""The official `openai` Python client against ARS's /v1: models, chat completions (whole and
streamed with usage), responses (whole, continued, streamed, read back), errors as the SDK's
typed exceptions. Strict response validation: every answer has every field the SDK requires.

Env: ARS_URL, ARS_TOKEN (owns the scripted agent `echo`), ARS_OTHER_TOKEN (another user).
"""

import os

import openai
from openai import OpenAI

base = os.environ["ARS_URL"] + "/v1"
client = OpenAI(base_url=base, api_key=os.environ["ARS_TOKEN"], _strict_response_validation=True)
other = OpenAI(base_url=base, api_key=os.environ["ARS_OTHER_TOKEN"], _strict_response_validation=True)

# Models: the caller's chat agents.
ids = [m.id for m in client.models.list()]
assert "echo" in ids, ids
assert "echo" not in [m.id for m in other.models.list()]

# A chat completion, whole.
done = client.chat.completions.create(
    model="echo",
    messages=[
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "second"},
    ],
)
assert done.choices[0].message.content == "heard second after 2 user turns", done
assert done.choices[0].finish_reason == "stop"
assert done.usage.total_tokens == 18, done.usage

# Streamed, with usage.
stream = client.chat.completions.create(
    model="echo",
    messages=[{"role": "user", "content": "stream me"}],
    stream=True,
    stream_options={"include_usage": True},
)
text, usage = "", None
for chunk in stream:
    if chunk.choices:
        text += chunk.choices[0].delta.content or ""
    if chunk.usage:
        usage = chunk.usage
assert text == "heard stream me after 1 user turns", text
assert usage is not None and usage.prompt_tokens == 11 and usage.completion_tokens == 7, usage

# The streaming helper accumulates the same answer.
with client.chat.completions.stream(
    model="echo", messages=[{"role": "user", "content": "helper"}]
) as helper:
    final = helper.get_final_completion()
assert final.choices[0].message.content == "heard helper after 1 user turns", final

# Responses: create, continue with previous_response_id, read back.
first = client.responses.create(model="echo", input="hello", instructions="ignored")
assert first.status == "completed", first
assert first.output_text == "heard hello after 1 user turns", first.output_text
second = client.responses.create(model="echo", input="again", previous_response_id=first.id)
assert second.output_text == "heard again after 2 user turns", second.output_text
assert second.previous_response_id == first.id
back = client.responses.retrieve(first.id)
assert back.output_text == first.output_text and back.id == first.id

# Streamed responses, raw and through the accumulating helper.
kinds = [event.type for event in client.responses.create(model="echo", input="flow", stream=True)]
assert kinds[0] == "response.created" and kinds[-1] == "response.completed", kinds
assert "response.output_text.delta" in kinds, kinds
with client.responses.stream(model="echo", input="helped") as helper:
    deltas = [e.delta for e in helper if e.type == "response.output_text.delta"]
    final = helper.get_final_response()
assert "".join(deltas) == "heard helped after 1 user turns", deltas
assert final.output_text == "heard helped after 1 user turns", final

# Errors as the SDK's typed exceptions.
try:
    client.chat.completions.create(model="no-such-agent", messages=[{"role": "user", "content": "x"}])
    raise AssertionError("an unknown model must fail")
except openai.NotFoundError as e:
    assert e.code == "model_not_found", e.code
try:
    other.chat.completions.create(model="echo", messages=[{"role": "user", "content": "x"}])
    raise AssertionError("another user's agent must not exist for them")
except openai.NotFoundError:
    pass
try:
    other.responses.retrieve(first.id)
    raise AssertionError("another user's response must not exist for them")
except openai.NotFoundError:
    pass
try:
    OpenAI(base_url=base, api_key="wrong", max_retries=0).models.list()
    raise AssertionError("a wrong key must fail")
except openai.AuthenticationError:
    pass
try:
    client.chat.completions.create(model="echo", messages=[{"role": "assistant", "content": "x"}])
    raise AssertionError("a conversation that does not end with the user must fail")
except openai.UnprocessableEntityError:
    pass

print("openai client: ok")
