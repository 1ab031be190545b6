import { useTranslation } from "react-i18next";
import type { McpServerView } from "../api/types";
import { SlugListField } from "./SlugListField";

interface McpServersFieldProps {
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  /** The MCP servers the user can see; `null` when they could not be loaded. */
  servers: McpServerView[] | null;
  /** What not setting the field resolves to; `undefined` when unknown. */
  inherited: readonly string[] | undefined;
  error: string | undefined;
}

/** The agent's MCP servers (`context.mcp_servers`). */
export function McpServersField({ value, onChange, servers, inherited, error }: McpServersFieldProps) {
  const { t } = useTranslation();
  return (
    <SlugListField
      field="mcp-servers"
      optionTestId="mcp-server-option"
      texts={{
        legend: t("mcpField.legend"),
        notVisible: t("mcpField.notVisible"),
        loadFailed: t("mcpField.loadFailed"),
        noneConfigured: t("mcpField.noneConfigured"),
        none: t("listChoice.noneMcpServers"),
      }}
      value={value}
      onChange={onChange}
      items={servers}
      inherited={inherited}
      error={error}
    />
  );
}
