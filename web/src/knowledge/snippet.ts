/**
 * A search hit's snippet as text segments: the server sends HTML-escaped text whose matched
 * words are wrapped in `<b>…</b>`. The page never hands it to the browser as HTML: it splits
 * at those two tags, decodes the character references and shows plain text, the matches marked.
 */

export interface SnippetSegment {
  text: string;
  /** A matched word. */
  hit: boolean;
}

const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\u00a0",
};

/** `text` with its character references (`&amp;`, `&#39;`, `&#x27;`) decoded; others kept. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

/**
 * The segments of `snippet`, in order, neighbours of the same kind joined. Only `<b>` and
 * `</b>` mark matches; any other `<` is not markup (the server escapes it), and an unclosed
 * `<b>` marks the rest.
 */
export function snippetSegments(snippet: string): SnippetSegment[] {
  const segments: SnippetSegment[] = [];
  const push = (raw: string, hit: boolean) => {
    const text = decodeEntities(raw);
    if (!text) return;
    const last = segments.at(-1);
    if (last && last.hit === hit) last.text += text;
    else segments.push({ text, hit });
  };
  let hit = false;
  for (const part of snippet.split(/(<\/?b>)/i)) {
    const tag = part.toLowerCase();
    if (tag === "<b>") hit = true;
    else if (tag === "</b>") hit = false;
    else push(part, hit);
  }
  return segments;
}
