import { describe, expect, test } from "vitest";
import { SseParser } from "./parser";

describe("SSE parser", () => {
  test("parses event, id and data fields into one message per blank line", () => {
    const parser = new SseParser();
    const messages = parser.push(
      'event: run_status\nid: 1\ndata: {"a":1}\n\nevent: usage\nid: 2\ndata: x\n\n',
    );
    expect(messages).toEqual([
      { event: "run_status", id: "1", data: '{"a":1}' },
      { event: "usage", id: "2", data: "x" },
    ]);
  });

  test("joins multi-line data with newlines", () => {
    const messages = new SseParser().push("data: one\ndata: two\ndata:three\n\n");
    expect(messages).toEqual([{ event: "message", id: "", data: "one\ntwo\nthree" }]);
  });

  test("ignores comment lines such as keep-alives", () => {
    const messages = new SseParser().push(": keep-alive\n\n:\ndata: x\n\n");
    expect(messages).toEqual([{ event: "message", id: "", data: "x" }]);
  });

  test("handles messages split across chunks at any point", () => {
    const wire = "event: message_delta\nid: 7\ndata: hel\ndata: lo\n\n";
    for (let cut = 1; cut < wire.length; cut++) {
      const parser = new SseParser();
      const messages = [...parser.push(wire.slice(0, cut)), ...parser.push(wire.slice(cut))];
      expect(messages).toEqual([{ event: "message_delta", id: "7", data: "hel\nlo" }]);
    }
  });

  test("accepts CRLF and CR line endings, including a CRLF split between chunks", () => {
    const parser = new SseParser();
    const first = parser.push("data: a\r\n\r");
    const second = parser.push("\ndata: b\r\rdata: c\n\n");
    expect([...first, ...second].map((m) => m.data)).toEqual(["a", "b", "c"]);
  });

  test("keeps the last id for later messages and reads retry", () => {
    const parser = new SseParser();
    const messages = parser.push("id: 5\ndata: a\n\ndata: b\n\nretry: 1500\nretry: soon\n\n");
    expect(messages.map((m) => m.id)).toEqual(["5", "5"]);
    expect(parser.retryMs).toBe(1500);
  });

  test("does not dispatch a message without data, nor an unfinished one", () => {
    const parser = new SseParser();
    expect(parser.push("event: ping\n\nid: 3\n\ndata: half")).toEqual([]);
    expect(parser.push("\n\n")).toEqual([{ event: "message", id: "3", data: "half" }]);
  });

  test("a field without a colon is a field with an empty value", () => {
    expect(new SseParser().push("data\n\n")).toEqual([{ event: "message", id: "", data: "" }]);
  });
});
