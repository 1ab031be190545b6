import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { mcpToolOrigin } from "./mcpTool";
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

/** The tool's name; for an MCP tool, its server and its own name. */
function ToolName({ name }: { name: string }) {
  const { t } = useTranslation();
  const origin = mcpToolOrigin(name);
  if (!origin) return <span className="tool-name">{name}</span>;
  return (
    <span className="tool-name" title={name}>
      <span className="badge muted tool-origin" data-testid="tool-mcp-server" data-server={origin.server}>
        {t("tool.mcpServer", { server: origin.server })}
      </span>
      <span data-testid="tool-own-name">
        {origin.tool}
        {origin.shortened && "…"}
      </span>
    </span>
  );
}

/** A tool call: its name and state, expandable to its arguments and result. */
export function ToolCard({ item, extra }: { item: ToolItem; extra?: ReactNode }) {
  const { t } = useTranslation();
  const { label, className } = state(item);
  return (
    <details className="tool-card" data-testid="tool-card" data-tool={item.name}>
      <summary>
        <ToolName name={item.name} />
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
