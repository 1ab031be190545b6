import { useTranslation } from "react-i18next";
import { CheckField } from "./Field";

interface ShareToggleProps {
  checked: boolean;
  onChange: (shared: boolean) => void;
  testId: string;
  /** The `error-<field>` id its error is shown under. */
  field: string;
  error?: string | undefined;
  disabled?: boolean;
}

/** "Share with every user (public)": the sharing control of every shared resource. */
export function ShareToggle(props: ShareToggleProps) {
  const { t } = useTranslation();
  return <CheckField label={t("share.public")} {...props} />;
}
