import { useTranslation } from "react-i18next";
import { useState } from "react";
import { Link } from "react-router-dom";
import { listSkills, type SkillView } from "../api/skills";
import { ErrorNote, Loading } from "../components/LoadState";
import { skillDescription } from "../lib/builtinText";
import { useAsync } from "../lib/useAsync";
import { formatBytes } from "../lib/format";
import { sortSkills } from "./skillModel";
import { ShadowedBadge, SkillSourceBadge } from "./SkillSourceBadge";
import { SkillUpload } from "./SkillUpload";
import { ListTable } from "../components/ListTable";

function matches(skill: SkillView, query: string): boolean {
  const q = query.trim().toLowerCase();
  const texts = [skill.name, skill.description, skillDescription(skill)];
  return !q || texts.some((text) => text.toLowerCase().includes(q));
}

/** The URL of a skill's detail page. */
export function skillUrl(skill: Pick<SkillView, "id">): string {
  return `/skills/${encodeURIComponent(skill.id)}`;
}

/** `/skills`: every skill the user can see, with the upload control. */
export function SkillsPage() {
  const { t } = useTranslation();
  const skills = useAsync(listSkills, "skills");
  const [query, setQuery] = useState("");
  const shown = sortSkills(skills.data ?? []).filter((s) => matches(s, query));

  return (
    <main className="page">
      <div className="page-head">
        <h1>{t("skills.title")}</h1>
        <input
          type="search"
          aria-label={t("skills.search")}
          placeholder={t("skills.searchPlaceholder")}
          data-testid="skill-search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
      </div>
      <p className="hint">{t("skills.intro")}</p>
      <SkillUpload onUploaded={() => skills.reload()} />
      <ErrorNote error={skills.error} />
      {skills.loading && !skills.data ? (
        <Loading text={t("skills.loading")} />
      ) : shown.length === 0 ? (
        <p className="empty">{query ? t("skills.noMatch") : t("skills.empty")}</p>
      ) : (
        <ListTable testId="skill-list">
          <thead>
            <tr>
              <th scope="col">{t("skills.columns.name")}</th>
              <th scope="col">{t("skills.columns.source")}</th>
              <th scope="col" className="wide-only">
                {t("skills.columns.description")}
              </th>
              <th scope="col" className="wide-only">
                {t("skills.columns.files")}
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((skill) => (
              <tr key={skill.id} data-testid={`skill-row-${skill.name}`} data-skill-id={skill.id}>
                <td>
                  <Link to={skillUrl(skill)} data-testid={`skill-open-${skill.name}`}>
                    {skill.name}
                  </Link>{" "}
                  {skill.shadowed && <ShadowedBadge />}
                </td>
                <td>
                  <SkillSourceBadge source={skill.source} />
                </td>
                <td className="wide-only description">{skillDescription(skill)}</td>
                <td className="wide-only">
                  {/* The list does not read personal folders: no counts (and no version) there. */}
                  {skill.version === ""
                    ? "—"
                    : t("skills.filesValue", {
                        count: skill.file_count,
                        size: formatBytes(skill.size_bytes),
                      })}
                </td>
              </tr>
            ))}
          </tbody>
        </ListTable>
      )}
    </main>
  );
}
