/**
 * Knowledge base citations in assistant text: agents cite a passage as
 * `[<knowledge base>:<document>#<chunk>]`, e.g. `[handbook:travel.md#3]` or
 * `[手册:差旅 制度.md#0]`. Document names may hold spaces, CJK, `:` and `#`, never `[`, `]` or
 * a line break, so a citation ends at the first `]` and its chunk number is after the last `#`.
 *
 * `remarkCitations` turns the citations in a Markdown tree's text into `<cite>` elements
 * (`data-citation` holds the citation id) and leaves code, inline code and links alone.
 */

export interface Citation {
  /** The citation id as written, brackets included: what `/api/knowledge-citations` reads. */
  ref: string;
  knowledgeBase: string;
  document: string;
  ordinal: number;
}

export type CitationPart = { kind: "text"; text: string } | { kind: "citation"; citation: Citation };

// A slug (any letters or digits, so a mistyped one still reads as a citation the server can
// refuse), a name that does not start with a space, and a chunk number.
const CITATION = /\[([\p{L}\p{N}_-]+):([^\s[\]][^[\]\n]*)#(\d+)\]/gu;

/** The citation `ref` names, or `null` when it is not one. */
export function parseCitation(ref: string): Citation | null {
  const parts = splitCitations(ref.trim());
  const only = parts.length === 1 ? parts[0] : undefined;
  return only?.kind === "citation" ? only.citation : null;
}

/** `text` split into plain runs and citations, in order (no empty runs). */
export function splitCitations(text: string): CitationPart[] {
  const parts: CitationPart[] = [];
  let at = 0;
  for (const match of text.matchAll(CITATION)) {
    const start = match.index;
    if (start > at) parts.push({ kind: "text", text: text.slice(at, start) });
    parts.push({
      kind: "citation",
      citation: {
        ref: match[0],
        knowledgeBase: match[1]!,
        document: match[2]!,
        ordinal: Number(match[3]),
      },
    });
    at = start + match[0].length;
  }
  if (at < text.length) parts.push({ kind: "text", text: text.slice(at) });
  return parts;
}

/** What a citation shows as in the text: the document and chunk. */
export function citationLabel(citation: Citation): string {
  return `${citation.document} #${citation.ordinal}`;
}

/** The few fields of Markdown syntax tree nodes this plugin reads and writes. */
interface MdNode {
  type: string;
  value?: string;
  children?: MdNode[];
  data?: Record<string, unknown>;
}

/** Nodes whose text is not prose: code stays as written, a link's text is already a link. */
const LEAVE = new Set(["code", "inlineCode", "link", "linkReference", "definition", "html"]);

function citationNode(citation: Citation): MdNode {
  return {
    type: "kbCitation",
    data: {
      hName: "cite",
      hProperties: { dataCitation: citation.ref, className: ["citation"] },
      hChildren: [{ type: "text", value: citationLabel(citation) }],
    },
  };
}

function transform(node: MdNode): void {
  if (!node.children || LEAVE.has(node.type)) return;
  node.children = node.children.flatMap((child) => {
    if (child.type !== "text" || !child.value) {
      transform(child);
      return [child];
    }
    const parts = splitCitations(child.value);
    if (parts.length === 1 && parts[0]!.kind === "text") return [child];
    return parts.map((part) =>
      part.kind === "text" ? { type: "text", value: part.text } : citationNode(part.citation),
    );
  });
}

/** A remark plugin: citations in text become `<cite data-citation="…">` elements. */
export function remarkCitations() {
  return (tree: MdNode) => transform(tree);
}
