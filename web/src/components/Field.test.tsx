import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, test, vi } from "vitest";
import { CheckField, controlProps, Field } from "./Field";
import { ShareToggle } from "./ShareToggle";

describe("a labelled field", () => {
  test("the label names the control, and an error describes it", () => {
    render(
      <Field prefix="kb-" label="Name" field="name" error="Name is required" hint="Shown to users">
        <input {...controlProps("kb-", "name", "Name is required")} />
      </Field>,
    );
    const control = screen.getByLabelText("Name");
    expect(control.id).toBe("kb-input-name");
    expect(control.getAttribute("data-testid")).toBe("kb-field-name");
    expect(control.getAttribute("aria-invalid")).toBe("true");
    expect(control.getAttribute("aria-describedby")).toBe("error-name");
    expect(screen.getByTestId("error-name").textContent).toBe("Name is required");
    expect(screen.getByText("Shown to users").className).toBe("hint");
  });

  test("without a prefix or an error: plain ids, no description, no alert", () => {
    render(
      <Field label="Slug" field="slug" error={undefined}>
        <input {...controlProps("", "slug", undefined)} />
      </Field>,
    );
    const control = screen.getByLabelText("Slug");
    expect(control.id).toBe("input-slug");
    expect(control.getAttribute("data-testid")).toBe("field-slug");
    expect(control.getAttribute("aria-invalid")).toBe("false");
    expect(control.hasAttribute("aria-describedby")).toBe(false);
    expect(screen.queryByRole("alert")).toBeNull();
    expect(document.querySelector(".hint")).toBeNull();
  });
});

describe("a checkbox field", () => {
  test("reports the new state, shows its hint and error", () => {
    const onChange = vi.fn();
    render(
      <CheckField
        label="Allow network"
        testId="mcp-field-network"
        field="network"
        checked={false}
        onChange={onChange}
        hint="Off by default"
        error="Not allowed here"
      />,
    );
    fireEvent.click(screen.getByLabelText("Allow network"));
    expect(onChange).toHaveBeenCalledWith(true);
    expect(screen.getByText("Off by default").className).toBe("hint");
    expect(screen.getByTestId("error-network").textContent).toBe("Not allowed here");
  });

  test("a disabled one cannot be changed", () => {
    render(
      <CheckField
        label="Default"
        testId="field-default"
        field="default"
        checked
        onChange={() => undefined}
        disabled
      />,
    );
    const box = screen.getByTestId("field-default") as HTMLInputElement;
    expect(box.checked).toBe(true);
    expect(box.disabled).toBe(true);
  });

  test("the share toggle is a checkbox field worded for sharing", () => {
    const onChange = vi.fn();
    render(<ShareToggle testId="kb-field-share" field="share" checked onChange={onChange} />);
    const box = screen.getByLabelText("Share with every user (public)") as HTMLInputElement;
    expect(box.getAttribute("data-testid")).toBe("kb-field-share");
    fireEvent.click(box);
    expect(onChange).toHaveBeenCalledWith(false);
  });
});
