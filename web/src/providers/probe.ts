/**
 * What the provider form asks a provider before anything is saved ("Test connection", "Fetch
 * from the provider") and how it words the answer: the settings on screen as a request, a
 * failure as one sentence in the user's language, a listed model set into the Models box.
 */

import type { TFunction } from "i18next";
import type { ListUnsavedRequest, ProbeError, ProviderWrite, TestResult } from "../api/providers";
import { parseModels, suggestName } from "./presets";

/**
 * The settings on screen as a probe asks with them: with `providerId` (editing a stored
 * provider), what the form leaves out — an API key not typed again, headers not shown — is that
 * provider's.
 */
export function probeRequest(write: ProviderWrite, providerId?: string): ListUnsavedRequest {
  const request: ListUnsavedRequest = { base_url: write.base_url, kind: "openai-compatible" };
  // The name only words the answer's messages; one the server would refuse is left out.
  const name = suggestName(write.name);
  if (name) request.name = name;
  if (write.api_key !== undefined) request.api_key = write.api_key;
  if (write.extra_headers) request.extra_headers = write.extra_headers;
  if (providerId) request.provider_id = providerId;
  return request;
}

/** Where the failure happened, to name it: the base URL asked and the model tested. */
export interface ProbeContext {
  url?: string;
  model?: string;
}

/**
 * A failed probe in one sentence: for a kind the UI knows, its own words (the server's message
 * would say the same again, in English); otherwise the server's message, which is all there is.
 */
export function probeSentence(t: TFunction, error: ProbeError, where: ProbeContext = {}): string {
  switch (error.kind) {
    case "bad_key":
      return t("providers.probe.bad_key");
    case "no_models":
      return t("providers.probe.no_models");
    case "unknown_model":
      // A test always names the model it asked; the server's words are the fallback.
      return where.model ? t("providers.probe.unknown_model", { model: where.model }) : serverWords(t, error);
    case "unreachable":
      return where.url
        ? t("providers.probe.unreachable_at", { url: where.url })
        : t("providers.probe.unreachable");
    case "other":
      return serverWords(t, error);
  }
}

const serverWords = (t: TFunction, error: ProbeError) => error.message.trim() || t("providers.probe.other");

/** A failed test's sentence, naming the model it asked. */
export function testFailure(t: TFunction, result: TestResult, url: string): string | null {
  if (result.ok || !result.error) return null;
  return probeSentence(t, result.error, { url, model: result.model || undefined });
}

/**
 * The Models box once a provider listed `listed`: what the user typed stays; an empty box takes
 * the list, one model a line.
 */
export function fillModels(box: string, listed: readonly string[] | null | undefined): string {
  if (parseModels(box).length > 0 || !listed?.length) return box;
  return listed.join("\n");
}
