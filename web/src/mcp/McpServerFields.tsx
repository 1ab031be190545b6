import { useTranslation } from "react-i18next";
import type { McpServerView } from "../api/types";
import { CheckField, controlProps, Field } from "../components/Field";
import { FieldError } from "../components/FieldError";
import { NameFields } from "../components/NameFields";
import { ShareToggle } from "../components/ShareToggle";
import { type McpFieldErrors, type McpFormField, type McpFormState, type TransportType } from "./serverModel";
import { ValueRows } from "./ValueRows";

interface McpServerFieldsProps {
  form: McpFormState;
  onChange: (patch: Partial<McpFormState>) => void;
  errors: McpFieldErrors;
  original: McpServerView | null;
  isAdmin: boolean;
}

const PREFIX = "mcp-";

/** The MCP server form's fields: display, transport (with its values), tools, sharing. */
export function McpServerFields({ form, onChange, errors, original, isAdmin }: McpServerFieldsProps) {
  const { t } = useTranslation();
  const input = (field: McpFormField) => controlProps(PREFIX, field, errors[field]);
  // Only admins add or change command servers: they run a program on this server.
  const stdioAllowed = isAdmin;

  return (
    <>
      <NameFields
        prefix={PREFIX}
        texts="mcp.form"
        form={form}
        errors={errors}
        onChange={onChange}
        slugFixed={original !== null}
        slugHint={original ? t("mcp.form.slugFixed") : t("mcp.form.slugHint")}
        slugFollowsName={!original}
        slugKind="mcp"
      />

      <section className="form-section" aria-labelledby="mcp-section-transport">
        <h2 id="mcp-section-transport">{t("mcp.form.sections.transport")}</h2>
        <fieldset className="field" data-testid="mcp-field-transport">
          <legend>{t("mcp.form.transport")}</legend>
          {(["streamable_http", "stdio"] as const).map((type: TransportType) => (
            <label className="check" key={type}>
              <input
                type="radio"
                name="mcp-transport"
                value={type}
                data-testid={`mcp-transport-${type}`}
                checked={form.transport === type}
                disabled={type === "stdio" && !stdioAllowed}
                onChange={() => onChange({ transport: type })}
              />
              {t(`mcp.form.transports.${type}`)}
            </label>
          ))}
          {!stdioAllowed && (
            <p className="hint" data-testid="mcp-stdio-admin-only">
              {t("mcp.form.stdioAdminOnly")}
            </p>
          )}
          <FieldError field="transport" message={errors.transport} />
        </fieldset>
        {form.transport === "stdio" ? (
          <>
            <Field
              prefix={PREFIX}
              label={t("mcp.form.command")}
              field="command"
              error={errors.command}
              hint={t("mcp.form.commandHint")}
            >
              <input
                {...input("command")}
                placeholder="npx"
                value={form.command}
                onChange={(e) => onChange({ command: e.target.value })}
              />
            </Field>
            <Field
              prefix={PREFIX}
              label={t("mcp.form.args")}
              field="args"
              error={errors.args}
              hint={t("mcp.form.argsHint")}
            >
              <textarea
                {...input("args")}
                className="code"
                rows={3}
                spellCheck={false}
                value={form.args}
                onChange={(e) => onChange({ args: e.target.value })}
              />
            </Field>
            <Field
              prefix={PREFIX}
              label={t("mcp.form.cwd")}
              field="cwd"
              error={errors.cwd}
              hint={t("mcp.form.cwdHint")}
            >
              <input
                {...input("cwd")}
                placeholder="/home/gem/user-data"
                value={form.cwd}
                onChange={(e) => onChange({ cwd: e.target.value })}
              />
            </Field>
            <CheckField
              label={t("mcp.form.network")}
              testId="mcp-field-network"
              field="network"
              checked={form.network}
              onChange={(network) => onChange({ network })}
              hint={t("mcp.form.networkHint")}
              error={errors.network}
            />
            <ValueRows
              kind="env"
              legend={t("mcp.form.env")}
              hint={t("mcp.form.secretHint")}
              rows={form.env}
              onChange={(env) => onChange({ env })}
              errors={errors}
            />
          </>
        ) : (
          <>
            <Field
              prefix={PREFIX}
              label={t("mcp.form.url")}
              field="url"
              error={errors.url}
              hint={t("mcp.form.urlHint")}
            >
              <input
                {...input("url")}
                inputMode="url"
                placeholder="http://127.0.0.1:3001/mcp"
                value={form.url}
                onChange={(e) => onChange({ url: e.target.value })}
              />
            </Field>
            <ValueRows
              kind="headers"
              legend={t("mcp.form.headers")}
              hint={t("mcp.form.headersHint")}
              rows={form.headers}
              onChange={(headers) => onChange({ headers })}
              errors={errors}
            />
          </>
        )}
      </section>

      <section className="form-section" aria-labelledby="mcp-section-tools">
        <h2 id="mcp-section-tools">{t("mcp.form.sections.tools")}</h2>
        <fieldset className="field" data-testid="mcp-field-enabled-tools">
          <legend>{t("mcp.form.tools")}</legend>
          <label className="check">
            <input
              type="radio"
              name="mcp-tools"
              data-testid="mcp-tools-all-option"
              checked={form.allTools}
              onChange={() => onChange({ allTools: true })}
            />
            {t("mcp.form.toolsAll")}
          </label>
          <label className="check">
            <input
              type="radio"
              name="mcp-tools"
              data-testid="mcp-tools-some-option"
              checked={!form.allTools}
              onChange={() => onChange({ allTools: false })}
            />
            {t("mcp.form.toolsSome")}
          </label>
          {!form.allTools && (
            <textarea
              className="code"
              rows={4}
              spellCheck={false}
              aria-label={t("mcp.form.toolsList")}
              data-testid="mcp-tools-list"
              aria-invalid={Boolean(errors["enabled-tools"])}
              value={form.tools}
              onChange={(e) => onChange({ tools: e.target.value })}
            />
          )}
          <p className="hint">{t("mcp.form.toolsHint")}</p>
          <FieldError field="enabled-tools" message={errors["enabled-tools"]} />
        </fieldset>
        <ShareToggle
          testId="mcp-field-share"
          field="share"
          checked={form.shared}
          onChange={(shared) => onChange({ shared })}
          error={errors.share}
        />
      </section>
    </>
  );
}
