/**
 * The Skills API: listing, uploading (raw archive or SKILL.md bytes), sharing, deleting, and
 * reading a skill's files. JSON calls are typed `openapi-fetch` calls; the upload's raw body
 * and the raw file answers go through `rawFetch` (same session, same `ApiError`).
 */

import { api, rawFetch, unwrap } from ".";
import type { ShareConfig, SkillFile, SkillView } from "./types";

export type { OfferedSkill, SkillFile, SkillSource, SkillView } from "./types";

export type UploadTarget = "shared" | "personal";

const skillPath = (id: string) => `/api/skills/${encodeURIComponent(id)}`;
const byId = (id: string) => ({ params: { path: { id } } });

/** Every skill the caller can see: built-in, shared with them, their personal ones. */
export function listSkills(): Promise<SkillView[]> {
  return unwrap(api.GET("/api/skills"));
}

export function getSkill(id: string): Promise<SkillView> {
  return unwrap(api.GET("/api/skills/{id}", byId(id)));
}

/** Sets the sharing of a shared skill the caller manages (a merge patch). */
export function patchSkillSharing(id: string, shareConfig: ShareConfig): Promise<SkillView> {
  return unwrap(api.PATCH("/api/skills/{id}", { ...byId(id), body: { share_config: shareConfig } }));
}

export async function deleteSkill(id: string): Promise<void> {
  await unwrap(api.DELETE("/api/skills/{id}", byId(id)));
}

export function listSkillFiles(id: string): Promise<SkillFile[]> {
  return unwrap(api.GET("/api/skills/{id}/files", byId(id)));
}

/** The URL path of one file of a skill; each segment of `file` is encoded, the slashes kept. */
export function skillFilePath(id: string, file: string): string {
  return `${skillPath(id)}/files/${file.split("/").map(encodeURIComponent).join("/")}`;
}

/** One file of a skill: its text when the server says it is text, else only its type. */
export async function readSkillFile(
  id: string,
  file: string,
): Promise<{ text: string | null; contentType: string }> {
  const response = await rawFetch(skillFilePath(id, file));
  const contentType = response.headers.get("Content-Type") ?? "";
  return { text: contentType.startsWith("text/") ? await response.text() : null, contentType };
}

/** The skill as a zip archive. */
export async function downloadSkill(id: string): Promise<Blob> {
  const response = await rawFetch(`${skillPath(id)}/download`);
  return response.blob();
}

/** Uploads a `.zip`/`.skill` archive or a single `SKILL.md`. */
export async function uploadSkill(
  body: Blob,
  contentType: string,
  target: UploadTarget,
  replace: boolean,
): Promise<SkillView> {
  const query = new URLSearchParams({ target, replace: String(replace) });
  const response = await rawFetch(`/api/skills?${query}`, {
    method: "POST",
    headers: { "Content-Type": contentType, Accept: "application/json" },
    body,
  });
  return (await response.json()) as SkillView;
}
