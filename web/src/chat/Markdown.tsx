import { useEffect, useRef, useState, type ComponentProps } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import { CopyButton } from "../components/CopyButton";

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

/** Assistant text as GitHub-flavoured Markdown (no raw HTML), code blocks highlighted. */
export function Markdown({ text }: { text: string }) {
  const rehypePlugins = useHighlighting(FENCE.test(text));
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={rehypePlugins} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
}
