import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, test } from "vitest";
import { SlugListField, type SlugListTexts } from "./SlugListField";
import type { SlugItem } from "./slugListModel";

const texts: SlugListTexts = {
  legend: "Things",
  notVisible: " [hidden]",
  loadFailed: "Load failed.",
  noneConfigured: "Nothing yet.",
  none: "No things",
};

type Thing = SlugItem & { size: number };
const thing = (slug: string, size = 3): Thing => ({ slug, name: `Thing ${slug}`, description: "", size });

function Harness({
  items,
  stored = null,
  withDetail = false,
}: {
  items: Thing[] | null;
  stored?: string[] | null;
  withDetail?: boolean;
}) {
  const [value, setValue] = useState(stored);
  return (
    <>
      <SlugListField
        field="things"
        optionTestId="thing-option"
        texts={texts}
        value={value}
        onChange={setValue}
        items={items}
        detail={withDetail ? (t) => `size ${t.size}` : undefined}
        inherited={["a"]}
        error={stored?.includes("gone") ? "no thing `gone`" : undefined}
      />
      <output data-testid="value">{JSON.stringify(value)}</output>
    </>
  );
}
const value = () => JSON.parse(screen.getByTestId("value").textContent!) as unknown;
const fieldText = () => screen.getByTestId("field-things").textContent;

describe("a field that names a list of things by slug", () => {
  test("names its test ids and error after the field, and speaks in the caller's words", () => {
    render(<Harness items={[thing("b"), thing("a")]} stored={["gone"]} />);
    expect(screen.getByRole("group", { name: "Things" })).toBeTruthy();
    expect((screen.getByTestId("things-mode-some") as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId("things-resolved").textContent).toBe("Resolves to: gone (1)");
    expect(screen.getByTestId("error-things").textContent).toContain("no thing `gone`");

    fireEvent.click(screen.getByTestId("thing-option-a"));
    expect(value()).toEqual(["gone", "a"]);
    fireEvent.click(screen.getByTestId("things-mode-inherit"));
    expect(value()).toBeNull();
    expect(screen.queryByTestId("thing-option-a")).toBeNull();
    expect(screen.getByLabelText("Inherit the server default (a)")).toBeTruthy();
    expect(screen.getByTestId("things-resolved").textContent).toBe("Resolves to: a (1)");
    fireEvent.click(screen.getByLabelText("No things"));
    expect(value()).toEqual([]);
    expect(screen.getByTestId("things-resolved").textContent).toBe("Resolves to: nothing");
  });

  test("shows the caller's detail after each visible item only, and none without one", () => {
    const { unmount } = render(<Harness items={[thing("a", 7)]} stored={["gone"]} withDetail />);
    expect(fieldText()).toContain("Thing a (a) size 7");
    expect(fieldText()).toContain("gone [hidden]");
    expect(fieldText()).not.toMatch(/gone.*size/);
    unmount();
    render(<Harness items={[thing("a", 7)]} stored={["a"]} />);
    expect(fieldText()).toContain("Thing a (a)");
    expect(fieldText()).not.toContain("size");
  });

  test("when the list could not be loaded, keeps the stored slugs without calling them hidden", () => {
    render(<Harness items={null} stored={["gone"]} />);
    expect((screen.getByTestId("thing-option-gone") as HTMLInputElement).checked).toBe(true);
    expect(fieldText()).toContain("Load failed.");
    expect(fieldText()).not.toContain("[hidden]");
    expect(fieldText()).not.toContain("Nothing yet.");
  });

  test("says when there is nothing to offer", () => {
    render(<Harness items={[]} stored={[]} />);
    fireEvent.click(screen.getByTestId("things-mode-some"));
    expect(fieldText()).toContain("Nothing yet.");
    expect(screen.queryByRole("checkbox")).toBeNull();
  });
});
