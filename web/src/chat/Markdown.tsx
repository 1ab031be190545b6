import { useRef, type ComponentProps } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import rehypeHighlight from "rehype-highlight";
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

// Only blocks that name their language are highlighted: guessing misreads prose and logs.
const rehypePlugins: NonNullable<ComponentProps<typeof ReactMarkdown>["rehypePlugins"]> = [
  [rehypeHighlight, { detect: false }],
];

/** Assistant text as GitHub-flavoured Markdown (no raw HTML), code blocks highlighted. */
export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={[remarkGfm]} rehypePlugins={rehypePlugins} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
}
