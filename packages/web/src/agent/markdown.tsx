import { lazy, Suspense } from "react";

const Renderer = lazy(() => import("./markdown-renderer"));

/** Model output as markdown; until the renderer's chunk has loaded, the plain text (never a blank). */
export function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  return (
    <div className="text md">
      <Suspense fallback={<p className="plain">{text}</p>}>
        <Renderer text={text} streaming={streaming} />
      </Suspense>
    </div>
  );
}
