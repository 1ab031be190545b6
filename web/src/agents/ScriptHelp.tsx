import { useTranslation } from "react-i18next";

/** A two-step tool loop: what a script looks like, ready to paste into the form. */
export const EXAMPLE_SCRIPT = JSON.stringify(
  [
    {
      text: "Let me look at the workdir.",
      tool_calls: [{ name: "execute", arguments: { command: "ls -la" } }],
      delay_ms: 300,
    },
    { text: "You asked: {{input}}. The directory holds:\n\n{{last_tool_result}}" },
  ],
  null,
  2,
);

const FIELDS = ["text", "tool_calls", "delay_ms", "chunk_delay_ms", "error", "usage"] as const;
const PLACEHOLDERS = [
  ["{{input}}", "input"],
  ["{{last_tool_result}}", "lastToolResult"],
  ["{{last_tool_result.run_id}}", "lastToolField"],
  ["{{tool_result.1.run_id}}", "toolResultField"],
  ["{{user_turns}}", "userTurns"],
  ["{{system_prompt}}", "systemPrompt"],
] as const;

/** How the scripted model plays a script: its turns' fields, placeholders and an example. */
export function ScriptHelp({ onUseExample }: { onUseExample: (script: string) => void }) {
  const { t } = useTranslation();
  return (
    <details className="script-help" data-testid="script-help">
      <summary>{t("scriptHelp.title")}</summary>
      <p>{t("scriptHelp.intro")}</p>
      <table>
        <thead>
          <tr>
            <th scope="col">{t("scriptHelp.field")}</th>
            <th scope="col">{t("scriptHelp.meaning")}</th>
          </tr>
        </thead>
        <tbody>
          {FIELDS.map((field) => (
            <tr key={field}>
              <td>
                <code>{field}</code>
              </td>
              <td>{t(`scriptHelp.fields.${field}`)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p>{t("scriptHelp.placeholdersIntro")}</p>
      <ul>
        {PLACEHOLDERS.map(([code, key]) => (
          <li key={code}>
            <code>{code}</code>: {t(`scriptHelp.placeholders.${key}`)}
          </li>
        ))}
      </ul>
      <p>{t("scriptHelp.exampleIntro")}</p>
      <pre className="code">{EXAMPLE_SCRIPT}</pre>
      <button type="button" data-testid="script-use-example" onClick={() => onUseExample(EXAMPLE_SCRIPT)}>
        {t("scriptHelp.useExample")}
      </button>
    </details>
  );
}
