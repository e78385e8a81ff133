import { decodeId, encodeId } from "../../../platform/ids.js";

/*
 * svc's virtual filesystem as the file tools see it (reference docs/tools/built-in.mdx, "Files"): one
 * directory, `/artifacts`, holding the agent's artifacts at `/artifacts/<artifact_id>`. The reference also
 * has `/memory/<store>/<file>` for attached memory stores; svc has none (the spec defines no memory
 * stores), so every `/memory` path is answered with NO_MEMORY.
 */

export const ARTIFACTS_DIR = "artifacts";
export const MEMORY_DIR = "memory";

export const NO_MEMORY =
  "No memory store is attached to this agent: svc has no memory stores, so nothing exists under /memory. " +
  "The files you can reach are your artifacts, under /artifacts (list_files /artifacts/* lists them).";

export const artifactPath = (artifactId: string) => `/${ARTIFACTS_DIR}/${encodeId("artifact", artifactId)}`;

/** One artifact named by an exact path: its row id, and the path as the model wrote it. */
export interface ArtifactFile {
  artifactId: string;
  path: string;
}

/** The artifact an exact file path names, or a message for the model saying what is wrong with the path. */
export function resolveFilePath(tool: string, path: string): ArtifactFile | { error: string } {
  if (!path.startsWith("/")) return { error: `${tool} takes an absolute path such as /artifacts/art_…; got ${JSON.stringify(path)}.` };
  const segments = path.slice(1).split("/");
  if (segments[0] === MEMORY_DIR) return { error: NO_MEMORY };
  if (segments[0] !== ARTIFACTS_DIR) {
    return { error: `${JSON.stringify(path)} is not a stored file: svc's files are your artifacts, /artifacts/<artifact_id>; list_files /artifacts/* lists them.` };
  }
  if (segments.length === 1 || (segments.length === 2 && segments[1] === "")) {
    return { error: `/artifacts is a directory; ${tool} takes one file, /artifacts/<artifact_id> (list_files /artifacts/* lists them).` };
  }
  const name = segments.slice(1).join("/");
  if (/[*?]/.test(name)) return { error: `${tool} takes one exact path /artifacts/<artifact_id>, not a pattern; find the file with list_files first.` };
  const artifactId = segments.length === 2 ? decodeId("artifact", name) : null;
  if (!artifactId) {
    return {
      error:
        `${JSON.stringify(path)} does not name an artifact: artifact paths are /artifacts/art_ followed by 26 letters and digits. ` +
        `To find an artifact by its filename, call list_files with a pattern such as /artifacts/${name.split("/").pop() || "*"}.`,
    };
  }
  return { artifactId, path };
}

export const notFound = (path: string) => `No artifact ${path} exists among this agent's artifacts; list_files /artifacts/* lists them.`;
