/**
 * The slug a resource's name suggests (agents, knowledge bases, MCP servers): the server's rule
 * is one for all three, 1-64 characters of `a-z`, `0-9` and `-`, starting and ending with a
 * letter or digit. Chinese is written in pinyin, word by word (翻译助手 → `fanyi-zhushou`);
 * letters with accents lose them (Café → `cafe`); a name that leaves nothing (emoji only) gets
 * a short random slug such as `agent-x7k2`.
 */

import { pinyin } from "pinyin-pro";

/** The longest slug the server takes. */
export const SLUG_MAX_CHARS = 64;

const SLUG_RULE = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/** Whether the server takes this slug. */
export function isValidSlug(slug: string): boolean {
  return slug.length <= SLUG_MAX_CHARS && SLUG_RULE.test(slug);
}

const HAN = /\p{Script=Han}/u;

// The browser's word breaker knows Chinese words (翻译 | 助手), which pinyin-pro's own
// segmentation does not: its dictionary holds only words whose reading it needs to look up.
const words = typeof Intl.Segmenter === "function" ? new Intl.Segmenter("zh", { granularity: "word" }) : null;

/** The name's words, Chinese words as the word breaker sees them; without one, by spaces. */
function splitWords(name: string): string[] {
  if (!words) return name.split(/\s+/);
  return [...words.segment(name)].map((s) => s.segment);
}

/** One word in ASCII: Chinese as toneless pinyin run together (ü as `v`), accents dropped. */
function romanize(word: string): string {
  const spelled = HAN.test(word) ? pinyin(word, { toneType: "none", type: "array", v: true }).join("") : word;
  return spelled
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-");
}

/**
 * The slug a name spells, or `""` when nothing of it is left. Past 64 characters it is cut at
 * the last whole word that fits (a single longer word is cut at 64).
 */
export function slugFromName(name: string): string {
  const slug = splitWords(name).map(romanize).join("-").replace(/-+/g, "-").replace(/^-|-$/g, "");
  if (slug.length <= SLUG_MAX_CHARS) return slug;
  const cut = slug.slice(0, SLUG_MAX_CHARS + 1);
  const end = cut.lastIndexOf("-");
  return (end > 0 ? cut.slice(0, end) : cut.slice(0, SLUG_MAX_CHARS)).replace(/-+$/, "");
}

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

/** A short random slug for a name that spells none: `<kind>-` and four letters or digits. */
export function fallbackSlug(kind: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(4));
  return `${kind}-${[...bytes].map((b) => ALPHABET[b % ALPHABET.length]).join("")}`;
}

/**
 * The slug to offer for a name: the one it spells, else `fallback` (for a name that is not
 * blank), else `""` while nothing is typed.
 */
export function suggestSlug(name: string, fallback: string): string {
  return slugFromName(name) || (name.trim() ? fallback : "");
}
