import { useTranslation } from "react-i18next";
import type { SkillSource } from "../api/skills";

/** Where a skill comes from: Built-in, Shared or Personal. */
export function SkillSourceBadge({ source }: { source: SkillSource }) {
  const { t } = useTranslation();
  return (
    <span className={`badge ${source === "builtin" ? "muted" : "accent"}`} data-testid="skill-source">
      {t(`skills.source.${source}`)}
    </span>
  );
}

/** Marks a skill another one of the same name wins over (personal > shared > built-in). */
export function ShadowedBadge() {
  const { t } = useTranslation();
  return (
    <span className="badge muted" data-testid="skill-shadowed" title={t("skills.shadowedHint")}>
      {t("skills.shadowed")}
    </span>
  );
}
