/**
 * The Skills UI's rules, apart from React: a SKILL.md split for display, what a file name is
 * uploaded as, and the names the agent form's Skills field offers.
 */

import type { SkillSource, SkillView } from "../api/skills";

/** A SKILL.md split at its frontmatter: the YAML text (without the `---` lines) and the body. */
export interface SplitSkillMd {
  frontmatter: string | null;
  body: string;
}

/**
 * Splits off the YAML frontmatter the way the server reads it: an optional BOM, a first line of
 * `---`, the YAML, a closing `---` line. Without a well-formed frontmatter the whole text is
 * the body. CRLF line endings are accepted.
 */
export function splitFrontmatter(text: string): SplitSkillMd {
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const lines = normalized.split("\n");
  if (lines[0]?.trimEnd() !== "---") return { frontmatter: null, body: normalized };
  const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === "---");
  if (close < 0) return { frontmatter: null, body: normalized };
  return {
    frontmatter: lines.slice(1, close).join("\n"),
    body: lines
      .slice(close + 1)
      .join("\n")
      .replace(/^\n+/, ""),
  };
}

/** The frontmatter fields a skill's detail shows, from the server's parsed view. */
export function frontmatterRows(skill: SkillView): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ["name", skill.name],
    ["description", skill.description],
  ];
  if (skill.license) rows.push(["license", skill.license]);
  if (skill.compatibility) rows.push(["compatibility", skill.compatibility]);
  if (skill.allowed_tools.length > 0) rows.push(["allowed-tools", skill.allowed_tools.join(" ")]);
  for (const [key, value] of Object.entries(skill.metadata)) rows.push([`metadata.${key}`, value]);
  return rows;
}

/** The Content-Type an upload is sent as, by file name; `null` for a file the server refuses. */
export function uploadContentType(fileName: string): string | null {
  const lower = fileName.toLowerCase();
  if (lower.endsWith(".zip") || lower.endsWith(".skill")) return "application/zip";
  if (lower.endsWith(".md")) return "text/markdown";
  return null;
}

/** Skills sorted by name, then by which one wins (personal > shared > built-in). */
export function sortSkills(skills: readonly SkillView[]): SkillView[] {
  const rank: Record<SkillSource, number> = { personal: 0, shared: 1, builtin: 2 };
  return [...skills].sort((a, b) => a.name.localeCompare(b.name) || rank[a.source] - rank[b.source]);
}

/** The stored value that means every skill the user can see, now and later. */
export const ALL_SKILLS = "*";

/**
 * The names the agent form offers: each visible skill's name once (a shadowed duplicate is the
 * same name to an agent), plus names the agent stores that are no longer visible, so saving
 * the form does not drop them silently.
 */
export function skillNameOptions(skills: readonly SkillView[], stored: readonly string[] | null): string[] {
  const names = new Set(skills.map((s) => s.name));
  for (const name of stored ?? []) if (name !== ALL_SKILLS) names.add(name);
  return [...names].sort((a, b) => a.localeCompare(b));
}
