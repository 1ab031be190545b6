// A local OpenAI-compatible server for the browser tests: `GET /v1/models` and streaming
// `POST /v1/chat/completions` in the real wire format (SSE chunks of `chat.completion.chunk`,
// a usage chunk, `data: [DONE]`), with the errors real providers answer (401 for a wrong key,
// 404 `model_not_found`).
import { createServer } from "node:http";

/**
 * Starts the server on a free loopback port. `answer(messages)` gives the reply text.
 * Returns `{ url, requests, close }`; `requests` records each chat request's body and headers.
 */
export async function startOpenAiServer({ key = "sk-test-key", models = ["local-chat"], answer } = {}) {
  const requests = [];
  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const raw = Buffer.concat(chunks).toString("utf8");
    const json = (status, body) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${key}`) {
      return json(401, {
        error: {
          message: "Incorrect API key provided.",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      });
    }
    if (req.method === "GET" && req.url === "/v1/models") {
      return json(200, {
        object: "list",
        data: models.map((id) => ({ id, object: "model", owned_by: "local" })),
      });
    }
    if (req.method !== "POST" || req.url !== "/v1/chat/completions")
      return json(404, { error: { message: "not found" } });
    const body = JSON.parse(raw);
    requests.push({ body, headers: req.headers });
    if (!models.includes(body.model)) {
      return json(404, {
        error: {
          message: `The model \`${body.model}\` does not exist.`,
          type: "invalid_request_error",
          code: "model_not_found",
        },
      });
    }
    const text = answer ? answer(body.messages) : "Hello from the local model.";
    const id = `chatcmpl-${requests.length}`;
    const chunk = (delta, finish = null) => ({
      id,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    if (!body.stream) {
      return json(200, {
        id,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
      });
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const send = (data) => res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
    send(chunk({ role: "assistant", content: "" }));
    for (const word of text.split(/(?<= )/)) send(chunk({ content: word }));
    send(chunk({}, "stop"));
    if (body.stream_options?.include_usage) {
      send({
        ...chunk({}),
        choices: [],
        usage: { prompt_tokens: 12, completion_tokens: 6, total_tokens: 18 },
      });
    }
    send("[DONE]");
    res.end();
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
