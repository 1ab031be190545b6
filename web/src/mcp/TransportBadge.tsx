import { useTranslation } from "react-i18next";
import type { TransportType } from "./serverModel";

/** "Command (stdio)" or "Streamable HTTP". */
export function TransportBadge({ type }: { type: TransportType }) {
  const { t } = useTranslation();
  return (
    <span className="badge muted" data-testid="mcp-transport" data-transport={type}>
      {t(`mcp.transport.${type}`)}
    </span>
  );
}
