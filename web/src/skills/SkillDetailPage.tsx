import { Trans, useTranslation } from "react-i18next";
import { useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { errorMessage } from "../api";
import {
  deleteSkill,
  downloadSkill,
  getSkill,
  listSkillFiles,
  patchSkillSharing,
  readSkillFile,
  type SkillFile,
  type SkillView,
} from "../api/skills";
import { Markdown } from "../chat/Markdown";
import { skillDescription } from "../lib/builtinText";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ErrorNote, Loading, LoadedPage } from "../components/LoadState";
import { SharingSection } from "../components/SharingSection";
import { useAsync } from "../lib/useAsync";
import { formatBytes } from "../lib/format";
import { frontmatterRows, splitFrontmatter } from "./skillModel";
import { ShadowedBadge, SkillSourceBadge } from "./SkillSourceBadge";

interface Loaded {
  skill: SkillView;
  files: SkillFile[];
  body: string;
}

async function load(id: string): Promise<Loaded> {
  const [skill, files, manifest] = await Promise.all([
    getSkill(id),
    listSkillFiles(id),
    readSkillFile(id, "SKILL.md"),
  ]);
  return { skill, files, body: splitFrontmatter(manifest.text ?? "").body };
}

/** `/skills/<id>`: one skill's SKILL.md, files, sharing, download and deletion. */
export function SkillDetailPage() {
  const { id = "" } = useParams();
  const loaded = useAsync(() => load(id), id);
  const { t } = useTranslation();

  return (
    <LoadedPage
      state={loaded}
      back={{ to: "/skills", label: t("skills.detail.backToSkills") }}
      errorTestId="skill-error"
    >
      {(data) => <SkillDetail key={id} {...data} onChanged={(skill) => loaded.setData({ ...data, skill })} />}
    </LoadedPage>
  );
}

function SkillDetail({ skill, files, body, onChanged }: Loaded & { onChanged: (skill: SkillView) => void }) {
  const navigate = useNavigate();
  const { t } = useTranslation();
  const [deleting, setDeleting] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);

  async function download() {
    setActionError(null);
    try {
      const blob = await downloadSkill(skill.id);
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = `${skill.name}.zip`;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (failure) {
      setActionError(t("skills.detail.downloadFailed", { message: errorMessage(failure) }));
    }
  }

  const deletable = skill.source !== "builtin" && skill.can_manage;
  return (
    <main className="page skill-detail" data-testid="skill-detail" data-skill-id={skill.id}>
      <p>
        <Link to="/skills" data-testid="skill-back">
          {t("skills.detail.back")}
        </Link>
      </p>
      <div className="page-head">
        <h1>{skill.name}</h1>
        <SkillSourceBadge source={skill.source} />
        {skill.shadowed && <ShadowedBadge />}
        <div className="row-actions">
          <button type="button" data-testid="skill-download" onClick={download}>
            {t("skills.detail.download")}
          </button>
          {deletable && (
            <button
              type="button"
              className="danger"
              data-testid="skill-delete"
              onClick={() => setDeleting(true)}
            >
              {t("common.delete")}
            </button>
          )}
        </div>
      </div>
      <p className="description">{skillDescription(skill)}</p>
      <p className="hint">
        {t("skills.detail.readAt")} <code data-testid="skill-path">{skill.path}</code> ·{" "}
        {t("skills.detail.version")} <code>{skill.version.slice(0, 12)}</code> ·{" "}
        {t("skills.detail.filesSize", { count: skill.file_count, size: formatBytes(skill.size_bytes) })}
      </p>
      {skill.shadowed && <p className="hint">{t("skills.detail.shadowedBy", { name: skill.name })}</p>}
      {actionError && (
        <p className="error" role="alert">
          {actionError}
        </p>
      )}

      {skill.source === "shared" && skill.can_manage && (
        <SharingSection
          prefix="skill"
          texts="skills.detail"
          shareConfig={skill.share_config}
          save={async (shareConfig) => onChanged(await patchSkillSharing(skill.id, shareConfig))}
        />
      )}

      <section aria-labelledby="skill-frontmatter-title">
        <h2 id="skill-frontmatter-title">{t("skills.detail.frontmatter")}</h2>
        <table className="frontmatter" data-testid="skill-frontmatter">
          <tbody>
            {frontmatterRows(skill).map(([key, value]) => (
              <tr key={key}>
                <th scope="row">
                  <code>{key}</code>
                </th>
                <td>{value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section aria-labelledby="skill-body-title">
        <h2 id="skill-body-title">SKILL.md</h2>
        <div className="skill-body" data-testid="skill-body">
          <Markdown text={body} />
        </div>
      </section>

      <SkillFiles skill={skill} files={files} />

      {deleting && (
        <ConfirmDeleteDialog
          title={t("skills.detail.deleteTitle", { name: skill.name })}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await deleteSkill(skill.id);
            navigate("/skills");
          }}
        >
          <p>
            <Trans
              i18nKey="skills.detail.deleteBody"
              values={{ source: t(`skills.sourceLower.${skill.source}`), name: skill.name }}
              components={{ code: <code /> }}
            />
          </p>
        </ConfirmDeleteDialog>
      )}
    </main>
  );
}

function SkillFiles({ skill, files }: { skill: SkillView; files: SkillFile[] }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState<string | null>(null);
  const content = useAsync(
    () => (open ? readSkillFile(skill.id, open) : Promise.resolve(null)),
    `${skill.id}:${open ?? ""}`,
  );
  return (
    <section aria-labelledby="skill-files-title">
      <h2 id="skill-files-title">{t("skills.detail.files")}</h2>
      <ul className="skill-files" data-testid="skill-files">
        {files.map((file) => (
          <li key={file.path}>
            <button
              type="button"
              className={open === file.path ? "link current" : "link"}
              data-testid={`skill-file-${file.path}`}
              aria-pressed={open === file.path}
              onClick={() => setOpen(open === file.path ? null : file.path)}
            >
              {file.path}
            </button>{" "}
            <span className="muted">{formatBytes(file.size_bytes)}</span>
          </li>
        ))}
      </ul>
      {open && (
        <div className="skill-file-view">
          <h3>
            <code>{open}</code>
          </h3>
          {content.error != null ? (
            <ErrorNote error={content.error} />
          ) : !content.data || content.loading ? (
            <Loading />
          ) : content.data.text === null ? (
            <p className="muted" data-testid="skill-file-binary">
              {t("skills.detail.binary", {
                type: content.data.contentType || t("skills.detail.unknownType"),
              })}
            </p>
          ) : (
            <pre className="code" data-testid="skill-file-content">
              {content.data.text}
            </pre>
          )}
        </div>
      )}
    </section>
  );
}
