import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { useState, type FormEvent } from "react";
import { describe, expect, test, vi } from "vitest";
import { useFormSave, type SaveFailure } from "../lib/useFormSave";
import { CheckField, controlProps, Field } from "./Field";
import { ResourceForm } from "./ResourceForm";

type Errors = Partial<Record<"name" | "public", string>>;

interface HarnessProps {
  /** What the form finds wrong before sending; nothing by default. */
  check?: () => SaveFailure<Errors> | null;
  send?: () => Promise<void>;
  explain?: (failure: unknown) => SaveFailure<Errors>;
  readOnly?: string | null;
  controlOfFieldError?: boolean;
  onCancel?: () => void;
}

/** A form made as the resource forms are: one text field and one checkbox. */
function Harness({
  check = () => null,
  send = () => Promise.resolve(),
  explain = () => ({ fields: {}, form: "refused" }),
  readOnly = null,
  controlOfFieldError = false,
  onCancel = () => undefined,
}: HarnessProps) {
  const save = useFormSave<Errors>({ formErrorTestId: "x-form-error", controlOfFieldError });
  const [name, setName] = useState("");
  async function submit(event: FormEvent) {
    event.preventDefault();
    const refused = check();
    if (refused) {
      save.fail(refused.fields, refused.form);
      return;
    }
    await save.run(send, explain);
  }
  return (
    <ResourceForm
      title="New thing"
      readOnly={readOnly}
      save={save}
      onSubmit={submit}
      onCancel={onCancel}
      testIds={{ readOnly: "x-read-only", formError: "x-form-error", save: "x-save", cancel: "x-cancel" }}
    >
      <Field prefix="x-" label="Name" field="name" error={save.errors.name}>
        <input
          {...controlProps("x-", "name", save.errors.name)}
          value={name}
          onChange={(e) => {
            setName(e.target.value);
            save.setErrors((current) => ({ ...current, name: undefined }));
          }}
        />
      </Field>
      <CheckField
        label="Public"
        testId="x-field-public"
        field="public"
        checked={false}
        onChange={() => undefined}
        error={save.errors.public}
      />
    </ResourceForm>
  );
}

const saveButton = () => screen.getByTestId("x-save") as HTMLButtonElement;

describe("a resource form", () => {
  test("is titled, labelled by its title, and offers Save and Cancel", () => {
    const onCancel = vi.fn();
    render(<Harness onCancel={onCancel} />);
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("New thing");
    expect(screen.getByRole("form", { name: "New thing" })).toBeTruthy();
    expect(saveButton().textContent).toBe("Save");
    expect(screen.queryByTestId("x-read-only")).toBeNull();
    fireEvent.click(screen.getByTestId("x-cancel"));
    expect(onCancel).toHaveBeenCalledTimes(1);
  });

  test("a read-only form says why, and nothing in it can be changed or saved", () => {
    render(<Harness readOnly="Only admins change this." />);
    expect(screen.getByTestId("x-read-only").textContent).toBe("Only admins change this.");
    expect(screen.getByLabelText("Name").closest("fieldset")?.disabled).toBe(true);
    expect(saveButton().disabled).toBe(true);
  });

  test("a refusal before sending marks the field and moves the focus to it", async () => {
    const send = vi.fn(() => Promise.resolve());
    render(
      <Harness
        check={() => ({ fields: { name: "Name is required" }, form: "Fix the marked fields." })}
        send={send}
      />,
    );
    fireEvent.click(saveButton());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByLabelText("Name")));
    expect(screen.getByTestId("error-name").textContent).toBe("Name is required");
    expect(screen.getByTestId("x-form-error").textContent).toBe("Fix the marked fields.");
    expect(send).not.toHaveBeenCalled();
    // An edit clears its field's error.
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "n" } });
    expect(screen.queryByTestId("error-name")).toBeNull();
  });

  test("with no marked control the focus goes to the form's error", async () => {
    render(<Harness check={() => ({ fields: { public: "Not allowed" }, form: "Refused." })} />);
    fireEvent.click(saveButton());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("x-form-error")));
  });

  test("or, when the form asks, to the control of the first field showing an error", async () => {
    render(
      <Harness check={() => ({ fields: { public: "Not allowed" }, form: "Refused." })} controlOfFieldError />,
    );
    fireEvent.click(saveButton());
    await waitFor(() => expect(document.activeElement).toBe(screen.getByTestId("x-field-public")));
  });

  test("sending says Saving…, and a refusal by the server is shown like any other", async () => {
    let refuse: (error: unknown) => void = () => undefined;
    const send = () => new Promise<void>((_, reject) => (refuse = reject));
    const explain = vi.fn(() => ({ fields: { name: "Taken" }, form: "The server refused." }));
    render(<Harness send={send} explain={explain} />);
    fireEvent.click(saveButton());
    await waitFor(() => expect(saveButton().textContent).toBe("Saving…"));
    expect(saveButton().disabled).toBe(true);
    const failure = new Error("409");
    await act(async () => refuse(failure));
    expect(explain).toHaveBeenCalledWith(failure);
    expect(saveButton().textContent).toBe("Save");
    expect(saveButton().disabled).toBe(false);
    expect(screen.getByTestId("error-name").textContent).toBe("Taken");
    expect(screen.getByTestId("x-form-error").textContent).toBe("The server refused.");
    await waitFor(() => expect(document.activeElement).toBe(screen.getByLabelText("Name")));
  });

  test("a new attempt clears the last refusal while it is sent", async () => {
    let calls = 0;
    const send = () => (++calls === 1 ? Promise.reject(new Error("no")) : new Promise<void>(() => undefined));
    render(<Harness send={send} explain={() => ({ fields: { name: "Taken" }, form: "Refused." })} />);
    fireEvent.click(saveButton());
    await screen.findByTestId("x-form-error");
    fireEvent.click(saveButton());
    await waitFor(() => expect(screen.queryByTestId("x-form-error")).toBeNull());
    expect(screen.queryByTestId("error-name")).toBeNull();
  });
});
