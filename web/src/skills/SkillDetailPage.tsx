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
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ShareToggle } from "../components/ShareToggle";
import { useAsync } from "../lib/useAsync";
import { isPublic, withPublic } from "../lib/sharing";
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

  if (loaded.error != null) {
    return (
      <main className="page">
        <p className="error" role="alert" data-testid="skill-error">
          {errorMessage(loaded.error)}
        </p>
        <Link to="/skills">{t("skills.detail.backToSkills")}</Link>
      </main>
    );
  }
  if (!loaded.data) {
    return (
      <main className="page">
        <p className="loading">{t("common.loading")}</p>
      </main>
    );
  }
  return (
    <SkillDetail
      key={id}
      {...loaded.data}
      onChanged={(skill) => loaded.setData({ ...loaded.data!, skill })}
    />
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
      <p className="description">{skill.description}</p>
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

      {skill.source === "shared" && skill.can_manage && <SkillSharing skill={skill} onChanged={onChanged} />}

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

function SkillSharing({ skill, onChanged }: { skill: SkillView; onChanged: (skill: SkillView) => void }) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | undefined>();
  // The choice being saved, shown at once; the stored one again once the server answered.
  const [pending, setPending] = useState<boolean | null>(null);
  async function change(shared: boolean) {
    setError(undefined);
    setPending(shared);
    try {
      onChanged(await patchSkillSharing(skill.id, withPublic(shared, skill.share_config)));
    } catch (failure) {
      setError(t("skills.detail.sharingFailed", { message: errorMessage(failure) }));
    } finally {
      setPending(null);
    }
  }
  const shared = pending ?? isPublic(skill.share_config);
  return (
    <section aria-labelledby="skill-sharing-title">
      <h2 id="skill-sharing-title">{t("skills.detail.sharing")}</h2>
      <ShareToggle
        testId="skill-share"
        field="skill-share"
        checked={shared}
        disabled={pending !== null}
        onChange={(shared) => void change(shared)}
        error={error}
      />
      <p className="hint" data-testid="skill-visibility">
        {shared
          ? t("skills.detail.visibilityPublic")
          : skill.share_config?.visibility === "users"
            ? t("skills.detail.visibilityUsers")
            : t("skills.detail.visibilityPrivate")}
      </p>
    </section>
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
            <p className="error" role="alert">
              {errorMessage(content.error)}
            </p>
          ) : !content.data || content.loading ? (
            <p className="loading">{t("common.loading")}</p>
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
