/**
 * The Skills API: listing, uploading (raw archive or SKILL.md bytes), sharing, deleting, and
 * reading a skill's files.
 */

import { rawFetch } from ".";
import type { ShareConfig } from "./types";

// Until the Skills API is in openapi.json these are written by hand, following its contract.
export type SkillSource = "builtin" | "shared" | "personal";

export interface SkillView {
  id: string;
  name: string;
  description: string;
  source: SkillSource;
  license: string | null;
  compatibility: string | null;
  metadata: Record<string, string>;
  allowed_tools: string[];
  owner_id: string | null;
  share_config: ShareConfig | null;
  version: string;
  file_count: number;
  size_bytes: number;
  path: string;
  shadowed: boolean;
  can_manage: boolean;
  created_at: string | null;
  updated_at: string | null;
}

/** A skill a run of an agent lists in its prompt (`ResolvedContext.offered_skills`). */
export interface OfferedSkill {
  name: string;
  source: SkillSource;
  path: string;
}

export interface SkillFile {
  path: string;
  size_bytes: number;
}

export type UploadTarget = "shared" | "personal";

const skillPath = (id: string) => `/api/skills/${encodeURIComponent(id)}`;

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await rawFetch(path, {
    ...init,
    headers: { Accept: "application/json", ...(init?.body ? { "Content-Type": "application/json" } : {}) },
  });
  return (await response.json()) as T;
}

/** Every skill the caller can see: built-in, shared with them, their personal ones. */
export function listSkills(): Promise<SkillView[]> {
  return json("/api/skills");
}

export function getSkill(id: string): Promise<SkillView> {
  return json(skillPath(id));
}

/** Replaces the sharing of a shared skill the caller manages (a merge patch). */
export function patchSkillSharing(id: string, shareConfig: ShareConfig): Promise<SkillView> {
  return json(skillPath(id), { method: "PATCH", body: JSON.stringify({ share_config: shareConfig }) });
}

export async function deleteSkill(id: string): Promise<void> {
  await rawFetch(skillPath(id), { method: "DELETE" });
}

export function listSkillFiles(id: string): Promise<SkillFile[]> {
  return json(`${skillPath(id)}/files`);
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
