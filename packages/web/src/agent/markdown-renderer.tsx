import { Streamdown, type Components } from "streamdown";

// streamdown renders emphasis as styled spans; <strong> and <em> keep their meaning for screen readers.
const components: Components = { strong: "strong", em: "em" };

/*
 * Loaded only by the agent view, on first use (markdown.tsx). streamdown renders markdown that is still
 * arriving: an unfinished code fence or emphasis is closed for display instead of showing raw marks.
 * Links open in a new tab without asking (linkSafety off): the console shows what the agent's model wrote
 * to the person who runs it. Raw HTML in model output is sanitized by streamdown's rehype-sanitize.
 */
export default function MarkdownRenderer({ text, streaming }: { text: string; streaming: boolean }) {
  return (
    <Streamdown className="markdown" mode={streaming ? "streaming" : "static"} parseIncompleteMarkdown={streaming} controls={false} linkSafety={{ enabled: false }} components={components}>
      {text}
    </Streamdown>
  );
}
