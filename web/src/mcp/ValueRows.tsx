import { useTranslation } from "react-i18next";
import { FieldError } from "../components/FieldError";
import { alwaysSecretHeader, newRow, rowField, type McpFieldErrors, type ValueRow } from "./serverModel";

interface ValueRowsProps {
  kind: "env" | "headers";
  legend: string;
  hint: string;
  rows: ValueRow[];
  onChange: (rows: ValueRow[]) => void;
  errors: McpFieldErrors;
}

/**
 * Environment variables or headers: a name, a value and a Secret switch each. A stored row keeps
 * its name; a stored secret is shown as set, and typing a value replaces it.
 */
export function ValueRows({ kind, legend, hint, rows, onChange, errors }: ValueRowsProps) {
  const { t } = useTranslation();
  const update = (key: string, patch: Partial<ValueRow>) =>
    onChange(rows.map((row) => (row.key === key ? { ...row, ...patch } : row)));
  return (
    <fieldset className="field" data-testid={`mcp-field-${kind}`}>
      <legend>{legend}</legend>
      {rows.map((row, i) => {
        const field = rowField(row);
        const forced = kind === "headers" && alwaysSecretHeader(row.name);
        const secret = row.secret || forced;
        const label = row.name.trim() || String(i + 1);
        return (
          <div className="value-row" key={row.key} data-testid={`mcp-${kind}-row-${i}`}>
            <input
              aria-label={t("mcp.form.valueName", { n: i + 1 })}
              placeholder={kind === "env" ? "API_TOKEN" : "Authorization"}
              data-testid={`mcp-${kind}-name-${i}`}
              value={row.name}
              readOnly={row.stored !== null}
              aria-invalid={Boolean(errors[field])}
              aria-describedby={errors[field] ? `error-${field}` : undefined}
              onChange={(e) => update(row.key, { name: e.target.value })}
            />
            <input
              aria-label={t("mcp.form.value", { name: label })}
              placeholder={row.stored?.secret ? t("mcp.form.secretKeep") : ""}
              data-testid={`mcp-${kind}-value-${i}`}
              type={secret ? "password" : "text"}
              autoComplete="off"
              value={row.value}
              onChange={(e) => update(row.key, { value: e.target.value })}
            />
            <label className="check">
              <input
                type="checkbox"
                data-testid={`mcp-${kind}-secret-${i}`}
                checked={secret}
                disabled={forced}
                onChange={(e) => update(row.key, { secret: e.target.checked })}
              />
              {t("mcp.form.secret")}
            </label>
            <button
              type="button"
              className="link"
              data-testid={`mcp-${kind}-remove-${i}`}
              aria-label={t("mcp.form.removeRow", { name: label })}
              onClick={() => onChange(rows.filter((r) => r.key !== row.key))}
            >
              {t("mcp.form.remove")}
            </button>
            <FieldError field={field} message={errors[field]} />
          </div>
        );
      })}
      <p>
        <button
          type="button"
          className="link"
          data-testid={`mcp-${kind}-add`}
          onClick={() => onChange([...rows, newRow()])}
        >
          {kind === "env" ? t("mcp.form.addEnv") : t("mcp.form.addHeader")}
        </button>
      </p>
      <p className="hint">{hint}</p>
      <FieldError field={kind} message={errors[kind]} />
    </fieldset>
  );
}
