import { Fragment } from "react";
import { useTranslation } from "react-i18next";
import { Dialog } from "../components/Dialog";
import { paletteKeys } from "./keys";

/** Keys as the keyboard writes them ("Shift+Enter" is two keys), and what they do. */
type Row = { keys: string[]; what: string };

/** `?` (outside a text field) or the user menu: every keyboard shortcut of the app. */
export function ShortcutsDialog({ onClose }: { onClose: () => void }) {
  const { t } = useTranslation();
  const sections: { title: string; rows: Row[] }[] = [
    {
      title: t("shortcuts.everywhere"),
      rows: [
        { keys: [paletteKeys()], what: t("shortcuts.palette") },
        { keys: ["?"], what: t("shortcuts.help") },
        { keys: ["Esc"], what: t("shortcuts.escape") },
        { keys: ["Tab"], what: t("shortcuts.skip") },
      ],
    },
    {
      title: t("shortcuts.chat"),
      rows: [
        { keys: ["Enter"], what: t("shortcuts.send") },
        { keys: ["Shift", "Enter"], what: t("shortcuts.newline") },
        { keys: ["Esc"], what: t("shortcuts.cancel") },
      ],
    },
    {
      title: t("palette.title"),
      rows: [
        { keys: ["↑", "↓"], what: t("shortcuts.paletteMove") },
        { keys: ["Enter"], what: t("shortcuts.paletteChoose") },
      ],
    },
  ];
  return (
    <Dialog
      title={t("shortcuts.title")}
      onClose={onClose}
      testId="shortcuts-dialog"
      actions={
        <button type="button" onClick={onClose}>
          {t("common.close")}
        </button>
      }
    >
      {sections.map((section) => (
        <section key={section.title} className="shortcut-section">
          <h3>{section.title}</h3>
          <dl className="shortcut-list">
            {section.rows.map((row) => (
              <div key={`${row.keys.join("+")}:${row.what}`} data-testid="shortcut-row">
                <dt>
                  {row.keys.map((key, at) => (
                    <Fragment key={key}>
                      {at > 0 && (row.keys[0] === "↑" ? " " : "+")}
                      <kbd>{key}</kbd>
                    </Fragment>
                  ))}
                </dt>
                <dd>{row.what}</dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
    </Dialog>
  );
}
