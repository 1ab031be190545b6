import type { SkillSource } from "../api/skills";

const LABELS: Readonly<Record<SkillSource, string>> = {
  builtin: "Built-in",
  shared: "Shared",
  personal: "Personal",
};

/** Where a skill comes from: Built-in, Shared or Personal. */
export function SkillSourceBadge({ source }: { source: SkillSource }) {
  return (
    <span className={`badge ${source === "builtin" ? "muted" : "accent"}`} data-testid="skill-source">
      {LABELS[source] ?? source}
    </span>
  );
}

/** Marks a skill another one of the same name wins over (personal > shared > built-in). */
export function ShadowedBadge() {
  return (
    <span
      className="badge muted"
      data-testid="skill-shadowed"
      title="Another skill with the same name wins (personal over shared over built-in)."
    >
      shadowed
    </span>
  );
}
