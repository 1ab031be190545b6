import { useId, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, errorMessage, unwrap } from "../api";
import type { PendingItem } from "../api/types";
import {
  argsEdited,
  buildDecisions,
  initialDraft,
  parseArgs,
  type ItemDraft,
  type PendingGroup,
} from "./pending";

interface ApprovalCardProps {
  group: PendingGroup;
  /** The server took the decisions on `callIds`: the card may go. */
  onResolved: (runId: string, callIds: readonly string[]) => void;
}

/**
 * One waiting run: each call it wants to make (approve, edit the arguments, or reject with a
 * reason) and each question it asks, decided together with one submit, as the server takes
 * them (`POST /api/runs/{id}/decisions`, every item of the run at once).
 */
export function ApprovalCard({ group, onResolved }: ApprovalCardProps) {
  const { t } = useTranslation();
  const [drafts, setDrafts] = useState<Record<string, ItemDraft>>({});
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const headingId = useId();
  const draftOf = (item: PendingItem) => drafts[item.call_id] ?? initialDraft(item);
  const change = (item: PendingItem, patch: Partial<ItemDraft>) =>
    setDrafts((old) => ({
      ...old,
      [item.call_id]: { ...(old[item.call_id] ?? initialDraft(item)), ...patch } as ItemDraft,
    }));
  const outcome = buildDecisions(group.items, drafts);

  async function submit() {
    if (!outcome.ok || busy) return;
    setBusy(true);
    setError(null);
    try {
      await unwrap(
        api.POST("/api/runs/{id}/decisions", {
          params: { path: { id: group.runId } },
          body: { decisions: outcome.decisions },
        }),
      );
      onResolved(
        group.runId,
        group.items.map((item) => item.call_id),
      );
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section
      className="approval-card"
      data-testid="approval-card"
      data-run-id={group.runId}
      aria-labelledby={headingId}
    >
      <h3 id={headingId}>{t("approval.heading", { agent: group.agentSlug })}</h3>
      <ul className="approval-items">
        {group.items.map((item) => (
          <li
            key={item.call_id}
            className="approval-item"
            data-testid="approval-item"
            data-call-id={item.call_id}
          >
            {item.kind === "approval" ? (
              <ApprovalItem item={item} draft={draftOf(item)} onChange={(patch) => change(item, patch)} />
            ) : (
              <QuestionItem item={item} draft={draftOf(item)} onChange={(patch) => change(item, patch)} />
            )}
          </li>
        ))}
      </ul>
      {error && (
        <p className="error" role="alert" data-testid="approval-error">
          {error}
        </p>
      )}
      <div className="approval-actions">
        <button
          type="button"
          className="primary"
          data-testid="approval-submit"
          disabled={!outcome.ok || busy}
          onClick={() => void submit()}
        >
          {busy ? t("approval.submitting") : t("approval.submit")}
        </button>
        {!outcome.ok && outcome.problem === "undecided" && (
          <span className="hint">{t("approval.undecided")}</span>
        )}
      </div>
    </section>
  );
}

type Approval = Extract<PendingItem, { kind: "approval" }>;
type Question = Extract<PendingItem, { kind: "question" }>;

interface ItemProps<I> {
  item: I;
  draft: ItemDraft;
  onChange: (patch: Partial<ItemDraft>) => void;
}

function ApprovalItem({ item, draft, onChange }: ItemProps<Approval>) {
  const { t } = useTranslation();
  if (draft.kind !== "approval") return null;
  const parsed = parseArgs(draft.args);
  const argsId = `approval-args-${item.run_id}-${item.call_id}`;
  return (
    <>
      <p className="approval-tool">
        {t("approval.tool")} <code>{item.tool}</code>
      </p>
      <label htmlFor={argsId} className="small-label">
        {t("approval.arguments")}
      </label>
      <textarea
        id={argsId}
        className="code approval-args"
        data-testid="approval-args"
        rows={Math.min(10, draft.args.split("\n").length + 1)}
        spellCheck={false}
        value={draft.args}
        aria-invalid={!parsed.ok}
        onChange={(e) => onChange({ args: e.target.value })}
      />
      {!parsed.ok && (
        <p className="field-error" data-testid="approval-args-error">
          {t(parsed.problem === "invalid_json" ? "approval.invalidJson" : "approval.notObject")}
        </p>
      )}
      {parsed.ok && argsEdited(item, draft) && <p className="hint">{t("approval.edited")}</p>}
      <div className="approval-choice" role="group" aria-label={t("approval.choice", { tool: item.tool })}>
        <button
          type="button"
          className={draft.choice === "approve" ? "primary" : undefined}
          aria-pressed={draft.choice === "approve"}
          data-testid="approval-approve"
          onClick={() => onChange({ choice: "approve" })}
        >
          {t("approval.approve")}
        </button>
        <button
          type="button"
          className={draft.choice === "reject" ? "danger" : undefined}
          aria-pressed={draft.choice === "reject"}
          data-testid="approval-reject"
          onClick={() => onChange({ choice: "reject" })}
        >
          {t("approval.reject")}
        </button>
      </div>
      {draft.choice === "reject" && (
        <input
          aria-label={t("approval.reason")}
          placeholder={t("approval.reason")}
          data-testid="approval-reason"
          value={draft.reason}
          onChange={(e) => onChange({ reason: e.target.value })}
        />
      )}
    </>
  );
}

function QuestionItem({ item, draft, onChange }: ItemProps<Question>) {
  const { t } = useTranslation();
  if (draft.kind !== "question") return null;
  return (
    <>
      <p className="approval-question">{item.question}</p>
      {(item.options ?? []).length > 0 && (
        <div className="approval-choice" role="group" aria-label={t("approval.options")}>
          {(item.options ?? []).map((option) => (
            <button
              key={option}
              type="button"
              className={draft.answer === option ? "primary" : undefined}
              aria-pressed={draft.answer === option}
              data-testid="question-option"
              onClick={() => onChange({ answer: option })}
            >
              {option}
            </button>
          ))}
        </div>
      )}
      <input
        aria-label={t("approval.answer")}
        placeholder={t("approval.answer")}
        data-testid="question-answer"
        value={draft.answer}
        onChange={(e) => onChange({ answer: e.target.value })}
      />
    </>
  );
}
