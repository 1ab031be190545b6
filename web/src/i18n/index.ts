/**
 * The UI's languages: English and 简体中文, through i18next. The language comes from the
 * browser the first time, then from the user's own choice (the user menu), remembered per user
 * in this browser and as the last choice for the login page.
 */

import i18n from "i18next";
import LanguageDetector from "i18next-browser-languagedetector";
import { initReactI18next } from "react-i18next";
import { en } from "./en";
import { zhCN } from "./zh-CN";

export const LANGUAGES = [
  { code: "en", label: "English" },
  { code: "zh-CN", label: "简体中文" },
] as const;

export type Language = (typeof LANGUAGES)[number]["code"];

/** Where the last choice is kept, for the login page and a first visit. */
export const LANGUAGE_KEY = "ars.language";
const userKey = (userId: string) => `${LANGUAGE_KEY}.${userId}`;

export const resources = {
  en: { translation: en },
  "zh-CN": { translation: zhCN },
} as const;

void i18n
  .use(LanguageDetector)
  .use(initReactI18next)
  .init({
    resources,
    supportedLngs: LANGUAGES.map((l) => l.code),
    // `zh`, `zh-TW`, `zh-Hans` all read Chinese; anything else falls back to English.
    fallbackLng: { zh: ["zh-CN"], default: ["en"] },
    nonExplicitSupportedLngs: false,
    load: "currentOnly",
    interpolation: { escapeValue: false },
    returnNull: false,
    detection: {
      order: ["localStorage", "navigator"],
      lookupLocalStorage: LANGUAGE_KEY,
      caches: ["localStorage"],
      convertDetectedLanguage: (lng: string) => (lng.toLowerCase().startsWith("zh") ? "zh-CN" : lng),
    },
  });

function syncDocument(lng: string) {
  if (typeof document !== "undefined") document.documentElement.lang = lng;
}
syncDocument(i18n.resolvedLanguage ?? "en");
i18n.on("languageChanged", syncDocument);

/** The language in use, one of {@link LANGUAGES}. */
export function currentLanguage(): Language {
  return i18n.resolvedLanguage === "zh-CN" ? "zh-CN" : "en";
}

/** Switches the UI's language and remembers it for `userId` (and as the last choice). */
export async function chooseLanguage(lng: Language, userId?: string): Promise<void> {
  try {
    if (userId) window.localStorage.setItem(userKey(userId), lng);
  } catch {
    // Storage may be unavailable (private mode): the choice lasts for this page only.
  }
  await i18n.changeLanguage(lng);
}

/** The browser's preferred language among ours (English when it prefers neither). */
export function browserLanguage(): Language {
  const preferred = typeof navigator === "undefined" ? [] : (navigator.languages ?? [navigator.language]);
  for (const lng of preferred) {
    if (lng.toLowerCase().startsWith("zh")) return "zh-CN";
    if (lng.toLowerCase().startsWith("en")) return "en";
  }
  return "en";
}

/**
 * After login: the language this user chose before in this browser, or else the browser's
 * own (not the choice another user made here).
 */
export async function restoreLanguage(userId: string): Promise<void> {
  let stored: string | null;
  try {
    stored = window.localStorage.getItem(userKey(userId));
  } catch {
    stored = null;
  }
  const wanted: Language = stored === "en" || stored === "zh-CN" ? stored : browserLanguage();
  if (wanted !== currentLanguage()) await i18n.changeLanguage(wanted);
}

export default i18n;
