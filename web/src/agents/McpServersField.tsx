import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { McpServerView } from "../api/types";
import { FieldError } from "../components/FieldError";
import { mcpServerOptions, mcpServersChoice, toggleMcpServer } from "./mcpModel";

interface McpServersFieldProps {
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  /** The MCP servers the user can see; `null` when they could not be loaded. */
  servers: McpServerView[] | null;
  error: string | undefined;
}

function summary(value: readonly string[] | null, t: TFunction): string {
  const choice = mcpServersChoice(value);
  switch (choice.kind) {
    case "inherit":
      return t("mcpField.summaryInherit");
    case "none":
      return t("mcpField.summaryNone");
    case "some":
      return t("mcpField.summarySome", { names: choice.slugs.join(", ") });
  }
}

/** The agent's MCP servers: inherited (not set), exactly the servers ticked, or none (`[]`). */
export function McpServersField({ value, onChange, servers, error }: McpServersFieldProps) {
  const { t } = useTranslation();
  const options = mcpServerOptions(servers, value);
  return (
    <fieldset className="field checkbox-group" data-testid="field-mcp-servers">
      <legend>{t("mcpField.legend")}</legend>
      {options.length > 0 && (
        <ul>
          {options.map((option) => (
            <li key={option.slug}>
              <label>
                <input
                  type="checkbox"
                  data-testid={`mcp-server-option-${option.slug}`}
                  checked={(value ?? []).includes(option.slug)}
                  onChange={(e) => onChange(toggleMcpServer(value, option.slug, e.target.checked))}
                />
                <span className="option-text">
                  <span className="option-label">
                    {option.visible ? `${option.name} (${option.slug})` : option.slug}
                    {servers !== null && !option.visible && (
                      <span className="muted">{t("mcpField.notVisible")}</span>
                    )}
                  </span>
                  {option.description && (
                    <span className="option-description" title={option.description}>
                      {option.description}
                    </span>
                  )}
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
      {servers === null && <p className="muted empty-hint">{t("mcpField.loadFailed")}</p>}
      {servers !== null && options.length === 0 && (
        <p className="muted empty-hint">{t("mcpField.noneConfigured")}</p>
      )}
      <p className="hint" data-testid="mcp-servers-summary">
        {summary(value, t)}{" "}
        {value === null && (
          <button type="button" className="link" data-testid="mcp-servers-none" onClick={() => onChange([])}>
            {t("mcpField.useNone")}
          </button>
        )}
        {value !== null && (
          <button type="button" className="link" onClick={() => onChange(null)}>
            {t("common.useServerDefault")}
          </button>
        )}
      </p>
      <FieldError field="mcp-servers" message={error} />
    </fieldset>
  );
}
