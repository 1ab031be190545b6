import { render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { describe, expect, test } from "vitest";
import { ApiError } from "../api/errors";
import i18n from "../i18n";
import { ErrorNote, Loading, LoadedPage } from "./LoadState";

const back = { to: "/knowledge", label: "Back to knowledge" };

function page(state: { data: string | undefined; error: unknown }, keepDataOnError = false) {
  return render(
    <MemoryRouter>
      <LoadedPage state={state} back={back} errorTestId="kb-error" keepDataOnError={keepDataOnError}>
        {(data) => <main data-testid="page">{data}</main>}
      </LoadedPage>
    </MemoryRouter>,
  );
}

describe("the load scaffold", () => {
  test("an error note words the failure for the user, and is absent without one", () => {
    const { rerender } = render(<ErrorNote error={new ApiError(0, "network", "fetch failed")} testId="x" />);
    expect(screen.getByRole("alert").textContent).toBe(
      "The server could not be reached. Check your connection and try again.",
    );
    expect(screen.getByTestId("x")).toBe(screen.getByRole("alert"));
    rerender(<ErrorNote error={null} />);
    expect(screen.queryByRole("alert")).toBeNull();
  });

  test("the loading line says Loading… unless the page words it", async () => {
    const { rerender } = render(<Loading />);
    expect(screen.getByText("Loading…").className).toBe("loading");
    rerender(<Loading text="Loading skills…" />);
    expect(screen.getByText("Loading skills…").className).toBe("loading");
    await i18n.changeLanguage("zh-CN");
    rerender(<Loading />);
    expect(screen.getByText("加载中…").className).toBe("loading");
  });

  test("a page loads, then shows its data", () => {
    const { rerender } = page({ data: undefined, error: null });
    expect(screen.getByText("Loading…")).toBeTruthy();
    expect(screen.queryByTestId("page")).toBeNull();
    rerender(
      <MemoryRouter>
        <LoadedPage state={{ data: "ready", error: null }} back={back}>
          {(data) => <main data-testid="page">{data}</main>}
        </LoadedPage>
      </MemoryRouter>,
    );
    expect(screen.getByTestId("page").textContent).toBe("ready");
  });

  test("a failure replaces the page, with the way back", () => {
    page({ data: "from another address", error: new Error("not found") });
    expect(screen.getByTestId("kb-error").textContent).toBe("not found");
    const link = screen.getByRole("link", { name: "Back to knowledge" });
    expect(link.getAttribute("href")).toBe("/knowledge");
    expect(screen.queryByTestId("page")).toBeNull();
  });

  test("a page that keeps its data through a failed reload stays on screen", () => {
    page({ data: "still true", error: new Error("reload failed") }, true);
    expect(screen.getByTestId("page").textContent).toBe("still true");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  test("without any data, even such a page shows the failure", () => {
    page({ data: undefined, error: new Error("gone") }, true);
    expect(screen.getByTestId("kb-error").textContent).toBe("gone");
  });

  test("a form's empty answer (nothing to edit yet) is data, not loading", () => {
    render(
      <MemoryRouter>
        <LoadedPage state={{ data: null, error: null }} back={back}>
          {(data) => <main data-testid="page">{data === null ? "new" : "edit"}</main>}
        </LoadedPage>
      </MemoryRouter>,
    );
    expect(screen.getByTestId("page").textContent).toBe("new");
  });
});
