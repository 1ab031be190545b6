/**
 * A streaming parser for the `text/event-stream` wire format (the HTML "server-sent events"
 * specification): feed it decoded text in chunks of any size and it returns the complete
 * messages so far. Lines end in CRLF, LF or CR; `:` lines are comments; `data:` lines join
 * with "\n"; `id:` persists across messages like `EventSource.lastEventId` does.
 */

/** One dispatched server-sent event. */
export interface SseMessage {
  /** The `event:` field, `"message"` when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen so far in the stream (empty before any). */
  id: string;
}

export class SseParser {
  private buffer = "";
  /** A CR ended the previous chunk: an LF starting the next one belongs to it. */
  private pendingCr = false;
  private event = "";
  private data: string[] = [];
  private lastId = "";
  /** The last valid `retry:` value in milliseconds, if the server sent one. */
  retryMs: number | undefined;

  /** Parses `chunk` and returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    let text = chunk;
    if (this.pendingCr && text.startsWith("\n")) {
      text = text.slice(1);
    }
    this.pendingCr = false;
    this.buffer += text;

    const messages: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const ch = this.buffer[i];
      if (ch !== "\n" && ch !== "\r") continue;
      const line = this.buffer.slice(start, i);
      if (ch === "\r") {
        if (i + 1 === this.buffer.length) {
          this.pendingCr = true;
        } else if (this.buffer[i + 1] === "\n") {
          i++;
        }
      }
      start = i + 1;
      const message = this.line(line);
      if (message) messages.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return messages;
  }

  private line(line: string): SseMessage | null {
    if (line === "") return this.dispatch();
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    switch (field) {
      case "event":
        this.event = value;
        break;
      case "data":
        this.data.push(value);
        break;
      case "id":
        if (!value.includes("\0")) this.lastId = value;
        break;
      case "retry":
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break;
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const event = this.event || "message";
    const data = this.data;
    this.event = "";
    this.data = [];
    if (data.length === 0) return null;
    return { event, data: data.join("\n"), id: this.lastId };
  }
}
