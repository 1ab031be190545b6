import { useTranslation } from "react-i18next";
import { useRef, useState } from "react";
import { errorMessage } from "../api";
import { uploadSkill, type SkillView, type UploadTarget } from "../api/skills";
import { uploadContentType } from "./skillModel";

/**
 * Uploads a skill as soon as a file is chosen: a `.zip`/`.skill` archive or a single SKILL.md,
 * as a shared or a personal skill. A refusal is shown in the UI's words.
 */
export function SkillUpload({ onUploaded }: { onUploaded: (skill: SkillView) => void }) {
  const { t } = useTranslation();
  const [target, setTarget] = useState<UploadTarget>("shared");
  const [replace, setReplace] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  async function upload(file: File) {
    setError(null);
    setDone(null);
    const contentType = uploadContentType(file.name);
    if (!contentType) {
      setError(t("skills.upload.wrongType", { name: file.name }));
      return;
    }
    setBusy(true);
    try {
      const skill = await uploadSkill(file, contentType, target, replace);
      setDone(t("skills.upload.done", { name: skill.name }));
      onUploaded(skill);
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
      if (input.current) input.current.value = "";
    }
  }

  return (
    <section className="skill-upload" aria-labelledby="skill-upload-title">
      <h2 id="skill-upload-title">{t("skills.upload.title")}</h2>
      <div className="upload-controls">
        <label>
          {t("skills.upload.target")}{" "}
          <select
            data-testid="skill-upload-target"
            value={target}
            onChange={(e) => setTarget(e.target.value as UploadTarget)}
          >
            <option value="shared">{t("skills.upload.targetShared")}</option>
            <option value="personal">{t("skills.upload.targetPersonal")}</option>
          </select>
        </label>
        <label className="check">
          <input
            type="checkbox"
            data-testid="skill-upload-replace"
            checked={replace}
            onChange={(e) => setReplace(e.target.checked)}
          />
          {t("skills.upload.replace")}
        </label>
        <label className="button primary file-button">
          {busy ? t("skills.upload.uploading") : t("skills.upload.choose")}
          <input
            ref={input}
            type="file"
            className="visually-hidden"
            data-testid="skill-upload"
            accept=".zip,.skill,.md"
            disabled={busy}
            onChange={(e) => {
              const file = e.target.files?.[0];
              if (file) void upload(file);
            }}
          />
        </label>
      </div>
      <p className="hint">{t("skills.upload.hint")}</p>
      {error && (
        <p className="error" role="alert" data-testid="skill-upload-error">
          {error}
        </p>
      )}
      {done && (
        <p className="success" role="status" data-testid="skill-upload-done">
          {done}
        </p>
      )}
    </section>
  );
}
