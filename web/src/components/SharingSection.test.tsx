import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, test, vi } from "vitest";
import { ApiError } from "../api/errors";
import type { ShareConfig } from "../api/types";
import i18n from "../i18n";
import { SharingSection } from "./SharingSection";

/** A save the test settles by hand. */
function deferred() {
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined;
  const promise = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  return { promise, settle: settle! };
}

function show(shareConfig: ShareConfig | null, save: (config: ShareConfig) => Promise<void>) {
  return render(
    <SharingSection prefix="kb" texts="knowledge.detail" shareConfig={shareConfig} save={save} />,
  );
}

const toggle = () => screen.getByTestId("kb-share") as HTMLInputElement;
const visibility = () => screen.getByTestId("kb-visibility").textContent;

describe("a detail page's Sharing section", () => {
  test("says who sees the resource, in the resource's words", () => {
    const { unmount } = show({ visibility: "public" }, vi.fn());
    expect(screen.getByRole("heading", { name: "Sharing" }).id).toBe("kb-sharing-title");
    expect(toggle().checked).toBe(true);
    expect(visibility()).toBe("Every user can search it and give it to their agents.");
    unmount();

    show({ visibility: "users", user_ids: ["u2"] }, vi.fn());
    expect(toggle().checked).toBe(false);
    expect(visibility()).toBe("Only the users it is shared with can use it.");
  });

  test("a missing configuration reads as private", () => {
    show(null, vi.fn());
    expect(toggle().checked).toBe(false);
    expect(visibility()).toBe("Only you (and admins) can see it and give it to agents.");
  });

  test("shows the choice at once, waits for the server, keeps the other lists", async () => {
    const pending = deferred();
    const save = vi.fn(() => pending.promise);
    show({ visibility: "users", user_ids: ["u2"] }, save);
    fireEvent.click(toggle());
    expect(save).toHaveBeenCalledWith({ visibility: "public", user_ids: ["u2"] });
    expect(toggle().checked).toBe(true);
    expect(toggle().disabled).toBe(true);
    expect(visibility()).toBe("Every user can search it and give it to their agents.");
    await act(async () => pending.settle.resolve());
    // The stored configuration (the caller's to update) shows again.
    expect(toggle().disabled).toBe(false);
    expect(toggle().checked).toBe(false);
  });

  test("a refused save is said under the toggle, and cleared by the next try", async () => {
    const save = vi.fn(() => Promise.reject(new ApiError(403, "forbidden_custom", "not yours")));
    show({ visibility: "private" }, save);
    fireEvent.click(toggle());
    await waitFor(() =>
      expect(screen.getByTestId("error-kb-share").textContent).toBe(
        "Could not change the sharing: not yours",
      ),
    );
    expect(toggle().checked).toBe(false);
    expect(toggle().getAttribute("aria-invalid")).toBeNull();

    save.mockImplementation(() => new Promise(() => undefined));
    fireEvent.click(toggle());
    expect(screen.queryByTestId("error-kb-share")).toBeNull();
  });

  test("reads 简体中文 too", async () => {
    await i18n.changeLanguage("zh-CN");
    render(
      <SharingSection
        prefix="skill"
        texts="skills.detail"
        shareConfig={{ visibility: "public" }}
        save={vi.fn()}
      />,
    );
    expect(screen.getByRole("heading").textContent).toBe("共享");
    expect(screen.getByTestId("skill-visibility").textContent).toBe("所有用户及其智能体都可以使用。");
  });
});
