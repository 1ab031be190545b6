import { useEffect, useMemo, useRef, useState, type ComponentProps } from "react";
import { useTranslation } from "react-i18next";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { CopyButton } from "../components/CopyButton";
import { remarkCitations } from "./citations";

/** A fenced code block with a copy button; its `language-*` class picks the highlighting. */
function CodeBlock({ node: _node, ...props }: ComponentProps<"pre"> & { node?: unknown }) {
  const pre = useRef<HTMLPreElement>(null);
  return (
    <div className="code-block">
      {/* The block's text without the newline Markdown ends every fenced block with. */}
      <CopyButton testId="code-copy" text={() => (pre.current?.textContent ?? "").replace(/\n$/, "")} />
      <pre ref={pre} {...props} />
    </div>
  );
}

const components: Components = {
  // Links from model output leave the app in a new tab, without giving it a handle on this one.
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  pre: CodeBlock,
};

/** A knowledge base citation (see `citations.ts`): a link-like button that opens the passage. */
function CitationLink({
  props,
  onCitation,
}: {
  props: ComponentProps<"cite">;
  onCitation: (ref: string) => void;
}) {
  const { t } = useTranslation();
  const ref = (props as Record<string, unknown>)["data-citation"];
  if (typeof ref !== "string") return <cite>{props.children}</cite>;
  return (
    <button
      type="button"
      className="link citation"
      data-testid="citation"
      data-citation={ref}
      title={ref}
      aria-label={t("citation.open", { ref })}
      onClick={() => onCitation(ref)}
    >
      {props.children}
    </button>
  );
}

type Plugins = NonNullable<ComponentProps<typeof ReactMarkdown>["rehypePlugins"]>;

// The highlighter and its grammars are most of the UI's code: they load, once, when the first
// text with a fenced block is shown; until then code shows plain.
let highlighting: Plugins | undefined;
let loading: Promise<Plugins> | undefined;
function loadHighlighting(): Promise<Plugins> {
  loading ??= import("rehype-highlight").then(({ default: rehypeHighlight }) => {
    // Only blocks that name their language are highlighted: guessing misreads prose and logs.
    highlighting = [[rehypeHighlight, { detect: false }]];
    return highlighting;
  });
  return loading;
}

/** The highlighting plugins once loaded, starting the load when `wanted`. */
function useHighlighting(wanted: boolean): Plugins | undefined {
  const [plugins, setPlugins] = useState(highlighting);
  useEffect(() => {
    if (!wanted || plugins) return;
    let live = true;
    void loadHighlighting().then((loaded) => live && setPlugins(loaded));
    return () => {
      live = false;
    };
  }, [wanted, plugins]);
  return plugins;
}

const FENCE = /^ {0,3}(```|~~~)/m;

const plainPlugins = [remarkGfm];
const citingPlugins = [remarkGfm, remarkCitations];

/**
 * Assistant text as GitHub-flavoured Markdown (no raw HTML), code blocks highlighted. With
 * `onCitation`, knowledge base citations in the prose (not in code) become buttons calling it.
 */
export function Markdown({ text, onCitation }: { text: string; onCitation?: (ref: string) => void }) {
  const rehypePlugins = useHighlighting(FENCE.test(text));
  const citing = useMemo<Components>(
    () =>
      onCitation
        ? {
            ...components,
            cite: ({ node: _node, ...props }) => <CitationLink props={props} onCitation={onCitation} />,
          }
        : components,
    [onCitation],
  );
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={onCitation ? citingPlugins : plainPlugins}
        rehypePlugins={rehypePlugins}
        components={citing}
      >
        {text}
      </ReactMarkdown>
    </div>
  );
}
