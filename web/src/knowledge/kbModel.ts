/**
 * The knowledge base pages' rules, apart from React: the list's order, what a stored knowledge
 * base looks like in the form, the `KnowledgeBaseWrite` a filled form sends, where a server
 * error about a payload path is shown, and which files the upload accepts.
 */

import { ApiError, errorMessage } from "../api/errors";
import type { KnowledgeBaseView, KnowledgeBaseWrite } from "../api/knowledge";
import i18n from "../i18n";
import { isPublic, withPublic } from "../lib/sharing";

/** The chunk settings' bounds and defaults, as the server states them. */
export const CHUNK_SIZE_MIN = 100;
export const CHUNK_SIZE_MAX = 4000;
export const DEFAULT_CHUNK_SIZE = 800;
export const DEFAULT_CHUNK_OVERLAP = 120;

/** The file extensions a document may have, as the upload names them to people. */
export const DOCUMENT_FORMATS = ["txt", "md", "html", "pdf", "docx", "csv", "json"] as const;

/** Other spellings the server reads as one of those (`.markdown` is Markdown, `.htm` HTML). */
const FORMAT_ALIASES = ["text", "log", "markdown", "htm"];

/** The `accept` attribute of the file picker. */
export const ACCEPT = [...DOCUMENT_FORMATS, ...FORMAT_ALIASES].map((f) => `.${f}`).join(",");

/** A file name's extension, lower case; empty without one. */
export function formatOf(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

/** Whether the server ingests a file of this name, by its extension. */
export function isAcceptedFile(name: string): boolean {
  const format = formatOf(name);
  return (DOCUMENT_FORMATS as readonly string[]).includes(format) || FORMAT_ALIASES.includes(format);
}

/** Knowledge bases by name, then slug. */
export function sortKnowledgeBases(bases: readonly KnowledgeBaseView[]): KnowledgeBaseView[] {
  return [...bases].sort((a, b) => a.name.localeCompare(b.name) || a.slug.localeCompare(b.slug));
}

/** The URL of a knowledge base's page (its edit form is `<url>/edit`). */
export function knowledgeBaseUrl(kb: Pick<KnowledgeBaseView, "id">): string {
  return `/knowledge/${encodeURIComponent(kb.id)}`;
}

export interface KbFormState {
  name: string;
  slug: string;
  description: string;
  chunkSize: string;
  chunkOverlap: string;
  /** Embed chunks too, for hybrid search. */
  embedding: boolean;
  embeddingProvider: string;
  embeddingModel: string;
  /** Public to every user (`share_config.visibility`). */
  shared: boolean;
}

/** The fields errors are shown at, as their `kb-field-<name>` / `error-<name>` test ids are. */
export type KbFormField =
  | "name"
  | "slug"
  | "description"
  | "chunk-size"
  | "chunk-overlap"
  | "embedding"
  | "embedding-provider"
  | "embedding-model"
  | "share";

export type KbFieldErrors = Partial<Record<KbFormField, string>>;

export function emptyKbForm(): KbFormState {
  return {
    name: "",
    slug: "",
    description: "",
    chunkSize: String(DEFAULT_CHUNK_SIZE),
    chunkOverlap: String(DEFAULT_CHUNK_OVERLAP),
    embedding: false,
    embeddingProvider: "",
    embeddingModel: "",
    shared: false,
  };
}

export function formFromKnowledgeBase(kb: KnowledgeBaseView): KbFormState {
  const embedding = kb.settings.embedding;
  return {
    name: kb.name,
    slug: kb.slug,
    description: kb.description,
    chunkSize: String(kb.settings.chunk_size),
    chunkOverlap: String(kb.settings.chunk_overlap),
    embedding: embedding !== null,
    embeddingProvider: embedding?.provider ?? "",
    embeddingModel: embedding?.model ?? "",
    shared: isPublic(kb.share_config),
  };
}

function wholeNumber(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) ? value : null;
}

export type KbBuildResult = { ok: true; write: KnowledgeBaseWrite } | { ok: false; errors: KbFieldErrors };

/**
 * The request body for `form`; `original` is the stored knowledge base when editing (its
 * sharing lists are kept). The chunk settings are checked as the server checks them, so the
 * form says what is wrong before sending.
 */
export function buildKbWrite(form: KbFormState, original: KnowledgeBaseView | null): KbBuildResult {
  const errors: KbFieldErrors = {};
  const size = wholeNumber(form.chunkSize);
  const overlap = wholeNumber(form.chunkOverlap);
  if (size === null) errors["chunk-size"] = i18n.t("knowledge.form.wholeNumber");
  else if (size < CHUNK_SIZE_MIN || size > CHUNK_SIZE_MAX) {
    errors["chunk-size"] = i18n.t("knowledge.form.chunkSizeRange", {
      min: CHUNK_SIZE_MIN,
      max: CHUNK_SIZE_MAX,
    });
  }
  if (overlap === null) errors["chunk-overlap"] = i18n.t("knowledge.form.wholeNumber");
  else if (size !== null && overlap > Math.floor(size / 2)) {
    errors["chunk-overlap"] = i18n.t("knowledge.form.overlapTooLarge", { max: Math.floor(size / 2) });
  }
  const provider = form.embeddingProvider.trim();
  const model = form.embeddingModel.trim();
  if (form.embedding) {
    if (!provider) errors["embedding-provider"] = i18n.t("knowledge.form.embeddingRequired");
    if (!model) errors["embedding-model"] = i18n.t("knowledge.form.embeddingRequired");
  }
  if (Object.keys(errors).length > 0 || size === null || overlap === null) return { ok: false, errors };
  return {
    ok: true,
    write: {
      slug: form.slug.trim(),
      name: form.name.trim(),
      description: form.description.trim(),
      settings: {
        chunk_size: size,
        chunk_overlap: overlap,
        embedding: form.embedding ? { provider, model } : null,
      },
      share_config: withPublic(form.shared, original?.share_config),
    },
  };
}

const PATH_FIELDS: ReadonlyArray<readonly [string, KbFormField]> = [
  ["slug", "slug"],
  ["name", "name"],
  ["description", "description"],
  ["settings.chunk_size", "chunk-size"],
  ["settings.chunk_overlap", "chunk-overlap"],
  ["settings.embedding.provider", "embedding-provider"],
  ["settings.embedding.model", "embedding-model"],
  ["settings.embedding", "embedding"],
  ["share_config", "share"],
];

const within = (path: string, prefix: string) =>
  path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);

/** The form field a server error's payload path (`field`) is about. */
export function kbFieldForPath(path: string): KbFormField | null {
  return PATH_FIELDS.find(([prefix]) => within(path, prefix))?.[1] ?? null;
}

/** A failed save as the form shows it: at its field when it names one, and as a summary. */
export function kbErrorsFromFailure(failure: unknown): { fields: KbFieldErrors; form: string } {
  if (!(failure instanceof ApiError)) {
    return { fields: {}, form: failure instanceof Error ? failure.message : String(failure) };
  }
  const field = failure.field ? kbFieldForPath(failure.field) : null;
  const message = errorMessage(failure);
  return {
    fields: field ? { [field]: message } : {},
    form: field
      ? i18n.t("knowledge.form.saveFailedAt", { message })
      : i18n.t("knowledge.form.saveFailed", { message }),
  };
}

const FIELD_OF: Readonly<Record<keyof KbFormState, readonly KbFormField[]>> = {
  name: ["name"],
  slug: ["slug"],
  description: ["description"],
  chunkSize: ["chunk-size", "chunk-overlap"],
  chunkOverlap: ["chunk-overlap"],
  embedding: ["embedding", "embedding-provider", "embedding-model"],
  embeddingProvider: ["embedding-provider", "embedding"],
  embeddingModel: ["embedding-model", "embedding"],
  shared: ["share"],
};

/** `errors` without those of the fields `patch` changes. */
export function clearKbEdited(errors: KbFieldErrors, patch: Partial<KbFormState>): KbFieldErrors {
  const next = { ...errors };
  for (const key of Object.keys(patch) as Array<keyof KbFormState>) {
    for (const field of FIELD_OF[key]) delete next[field];
  }
  return next;
}
