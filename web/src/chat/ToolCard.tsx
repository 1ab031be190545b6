import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { ToolItem } from "./transcript";

/** JSON text re-indented for reading; anything else as it came. */
function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

type ToolState = "interrupted" | "running" | "failed" | "noResult" | "done";

function state(item: ToolItem): { label: ToolState; className: string } {
  if (item.interrupted && item.result === null) return { label: "interrupted", className: "interrupted" };
  if (!item.done) return { label: "running", className: "running" };
  if (item.isError) return { label: "failed", className: "error" };
  return { label: item.result === null ? "noResult" : "done", className: "success" };
}

/** A tool call: its name and state, expandable to its arguments and result. */
export function ToolCard({ item, extra }: { item: ToolItem; extra?: ReactNode }) {
  const { t } = useTranslation();
  const { label, className } = state(item);
  return (
    <details className="tool-card" data-testid="tool-card" data-tool={item.name}>
      <summary>
        <span className="tool-name">{item.name}</span>
        <span className={`status ${className}`}>{t(`tool.state.${label}`)}</span>
      </summary>
      <div className="tool-body">
        <h4>{t("tool.arguments")}</h4>
        <pre>{item.arguments ? pretty(item.arguments) : t("tool.noArguments")}</pre>
        <h4>{t("tool.result")}</h4>
        <pre className={item.isError ? "error" : undefined}>
          {item.result === null ? (item.done ? t("tool.noResult") : "…") : pretty(item.result)}
        </pre>
      </div>
      {extra}
    </details>
  );
}
