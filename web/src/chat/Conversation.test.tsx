import { act, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { Message } from "../api/types";
import { Conversation } from "./Conversation";
import { fromMessages } from "./transcript";

const msg = (id: string, role: Message["role"], content: string, seq: number): Message => ({
  id,
  thread_id: "t1",
  seq,
  role,
  content,
  created_at: "2026-01-02T03:04:05Z",
});

const transcript = fromMessages([
  msg("m1", "user", "plan the launch", 1),
  msg("m2", "assistant", "Here is the plan", 2),
  msg("m3", "user", "thanks", 3),
]);

const flashed = () =>
  [...document.querySelectorAll(".message.flash")].map((el) => el.getAttribute("data-message-id"));

let scrolled: string[] = [];
const scrollIntoView = Element.prototype.scrollIntoView;
beforeEach(() => {
  vi.useFakeTimers();
  scrolled = [];
  Element.prototype.scrollIntoView = function (this: Element) {
    scrolled.push(this.getAttribute("data-message-id") ?? "end");
  };
});
afterEach(() => {
  vi.useRealTimers();
  Element.prototype.scrollIntoView = scrollIntoView;
});

describe("a message opened from a search hit", () => {
  test("is scrolled to and marked for a moment", async () => {
    render(<Conversation transcript={transcript} focus={{ messageId: "m2", key: "k1" }} />);
    expect(screen.getAllByTestId("message-assistant")[0]!.getAttribute("data-message-id")).toBe("m2");
    expect(flashed()).toEqual(["m2"]);
    // The newest-message scroll comes first; the opened message has the last word.
    expect(scrolled.at(-1)).toBe("m2");
    await act(() => vi.advanceTimersByTimeAsync(2000));
    expect(flashed()).toEqual([]);
  });

  test("waits for its messages to load, and is marked again when opened again", async () => {
    const view = render(
      <Conversation transcript={fromMessages([])} focus={{ messageId: "m1", key: "k1" }} />,
    );
    expect(scrolled).not.toContain("m1");
    view.rerender(<Conversation transcript={transcript} focus={{ messageId: "m1", key: "k1" }} />);
    expect(flashed()).toEqual(["m1"]);
    expect(scrolled.at(-1)).toBe("m1");
    await act(() => vi.advanceTimersByTimeAsync(2000));
    expect(flashed()).toEqual([]);

    view.rerender(<Conversation transcript={transcript} focus={{ messageId: "m1", key: "k2" }} />);
    expect(flashed()).toEqual(["m1"]);
    expect(scrolled.filter((id) => id === "m1")).toHaveLength(2);
  });

  test("a new message does not pull the view away from it", () => {
    const view = render(<Conversation transcript={transcript} focus={{ messageId: "m1", key: "k1" }} />);
    scrolled = [];
    const more = fromMessages([
      msg("m1", "user", "plan the launch", 1),
      msg("m2", "assistant", "Here is the plan", 2),
      msg("m3", "user", "thanks", 3),
      msg("m4", "assistant", "welcome", 4),
    ]);
    view.rerender(<Conversation transcript={more} focus={{ messageId: "m1", key: "k1" }} />);
    expect(scrolled).toEqual([]);
  });
});

describe("a user message with attached files", () => {
  test("shows its text, and the files it names as chips", () => {
    render(
      <Conversation
        transcript={fromMessages([
          msg("m9", "user", "sum it\n\nAttached files: uploads/a.csv, uploads/报告.md", 1),
        ])}
      />,
    );
    const bubble = screen.getByTestId("message-user");
    expect(bubble.querySelector("p")!.textContent).toBe("sum it");
    expect(
      [...screen.getByTestId("message-files").querySelectorAll("li")].map((li) => li.dataset.path),
    ).toEqual(["uploads/a.csv", "uploads/报告.md"]);
  });
});

describe("earlier messages", () => {
  const later = fromMessages([msg("m3", "user", "thanks", 3)]);

  test("a button above the first message reads them", () => {
    const onLoadEarlier = vi.fn();
    const view = render(<Conversation transcript={later} hasEarlier onLoadEarlier={onLoadEarlier} />);
    const button = screen.getByRole("button", { name: "Load earlier messages" });
    expect(button.nextElementSibling?.getAttribute("data-message-id")).toBe("m3");
    fireEvent.click(button);
    expect(onLoadEarlier).toHaveBeenCalledTimes(1);
    view.rerender(
      <Conversation transcript={later} hasEarlier loadingEarlier onLoadEarlier={onLoadEarlier} />,
    );
    expect(screen.getByTestId("load-earlier").textContent).toBe("Loading earlier messages…");
    expect(screen.getByTestId("load-earlier")).toHaveProperty("disabled", true);
    view.rerender(<Conversation transcript={later} onLoadEarlier={onLoadEarlier} />);
    expect(screen.queryByTestId("load-earlier")).toBeNull();
  });

  test("put before the first message, they keep it where it was on screen", () => {
    // Where each message stands in the view: the earlier ones push "m3" 600px down.
    let pushed = 0;
    const rect = Element.prototype.getBoundingClientRect;
    Element.prototype.getBoundingClientRect = function (this: Element) {
      const top = this.getAttribute("data-message-id") === "m3" ? 100 + pushed : 0;
      return { top, bottom: top, left: 0, right: 0, height: 0, width: 0, x: 0, y: top } as DOMRect;
    };
    try {
      const view = render(<Conversation transcript={later} hasEarlier onLoadEarlier={() => {}} />);
      fireEvent.click(screen.getByTestId("load-earlier"));
      const log = screen.getByRole("log");
      log.scrollTop = 0;
      pushed = 600;
      view.rerender(<Conversation transcript={transcript} hasEarlier={false} onLoadEarlier={() => {}} />);
      expect(log.scrollTop).toBe(600);
      expect(screen.getAllByTestId("message-user")[0]!.getAttribute("data-message-id")).toBe("m1");
    } finally {
      Element.prototype.getBoundingClientRect = rect;
    }
  });
});
