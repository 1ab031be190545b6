import { act, fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { Agent, Thread } from "../api/types";
import i18n from "../i18n";
import { ThreadList } from "./ThreadList";

const threads = [
  { id: "t2", agent_id: "a1", title: "Launch plan", updated_at: "2026-01-02T10:02:00Z" },
  { id: "t1", agent_id: "a1", title: "Budget", updated_at: "2026-01-02T10:01:00Z" },
] as Thread[];
const agents = [{ id: "a1", name: "Alpha helper" }] as Agent[];

/** A stand-in for the browser's IntersectionObserver: the test says when the button shows. */
let observers: { callback: IntersectionObserverCallback; targets: Element[] }[] = [];
class FakeObserver {
  entry: { callback: IntersectionObserverCallback; targets: Element[] };
  constructor(callback: IntersectionObserverCallback) {
    this.entry = { callback, targets: [] };
    observers.push(this.entry);
  }
  observe(target: Element) {
    this.entry.targets.push(target);
  }
  disconnect() {
    observers = observers.filter((o) => o !== this.entry);
  }
}
const scrollIntoView = () =>
  act(() => {
    for (const { callback, targets } of observers) {
      callback(
        targets.map((target) => ({ target, isIntersecting: true }) as IntersectionObserverEntry),
        {} as IntersectionObserver,
      );
    }
  });

beforeEach(() => {
  observers = [];
  vi.stubGlobal("IntersectionObserver", FakeObserver);
});
afterEach(() => {
  vi.unstubAllGlobals();
});

function list(props: Partial<Parameters<typeof ThreadList>[0]> = {}) {
  const onLoadMore = vi.fn();
  const view = render(
    <MemoryRouter>
      <ThreadList
        threads={threads}
        agents={agents}
        query=""
        loading={false}
        more
        onLoadMore={onLoadMore}
        onOpen={() => {}}
        onRename={() => Promise.resolve(true)}
        onDelete={() => {}}
        {...props}
      />
    </MemoryRouter>,
  );
  return { view, onLoadMore };
}

describe("the end of the loaded thread list", () => {
  test("offers loading more threads when the server has more", () => {
    const { onLoadMore } = list();
    expect(screen.getAllByTestId("thread-item")).toHaveLength(2);
    fireEvent.click(screen.getByRole("button", { name: "Load more threads" }));
    expect(onLoadMore).toHaveBeenCalledTimes(1);
  });

  test("offers nothing more once every thread is listed", () => {
    list({ more: false });
    expect(screen.queryByTestId("thread-load-more")).toBeNull();
  });

  test("loads the next page by itself when the button scrolls into view", () => {
    const { onLoadMore } = list();
    scrollIntoView();
    expect(onLoadMore).toHaveBeenCalledTimes(1);
  });

  test("while a page loads, says so and neither the button nor scrolling asks again", () => {
    const { onLoadMore } = list({ loadingMore: true });
    const button = screen.getByTestId("thread-load-more");
    expect(button.textContent).toBe("Loading more threads…");
    expect(button).toHaveProperty("disabled", true);
    scrollIntoView();
    expect(onLoadMore).not.toHaveBeenCalled();
  });

  test("a search does not pull in every page by itself, but the button stays", () => {
    const { onLoadMore } = list({ query: "nothing like it" });
    scrollIntoView();
    expect(onLoadMore).not.toHaveBeenCalled();
    fireEvent.click(screen.getByTestId("thread-load-more"));
    expect(onLoadMore).toHaveBeenCalledTimes(1);
  });

  test("speaks Chinese", async () => {
    await i18n.changeLanguage("zh-CN");
    list();
    expect(screen.getByTestId("thread-load-more").textContent).toBe("加载更多线程");
  });
});
