import { pathProblem } from "../../../modules/memory-stores/paths.js";
import { decodeId, encodeId } from "../../../platform/ids.js";
import type { MemoryAttachmentDefinition } from "../../definition.js";

/*
 * svc's virtual filesystem as the file tools see it (reference docs/tools/built-in.mdx, "Files"):
 * `/artifacts` holds the agent's artifacts at `/artifacts/<artifact_id>`, and `/memory/<store>/<file>` the
 * files of the memory stores its config attaches (the `memory` section; issue 31, item 2). A store the
 * config does not attach does not exist for the agent, whatever the project holds.
 */

export const ARTIFACTS_DIR = "artifacts";
export const MEMORY_DIR = "memory";

export const NO_MEMORY =
  "No memory store is attached to this agent (its config has no memory section), so nothing exists under /memory. " +
  "The files you can reach are your artifacts, under /artifacts (list_files /artifacts/* lists them).";

export const artifactPath = (artifactId: string) => `/${ARTIFACTS_DIR}/${encodeId("artifact", artifactId)}`;
export const memoryPath = (store: string, file: string) => `/${MEMORY_DIR}/${store}/${file}`;

/** One artifact named by an exact path: its row id, and the path as the model wrote it. */
export interface ArtifactFile {
  kind: "artifact";
  artifactId: string;
  path: string;
}

/** One file of an attached memory store: the attachment, the file's path inside the store, and its full path. */
export interface MemoryFileRef {
  kind: "memory";
  store: MemoryAttachmentDefinition;
  file: string;
  path: string;
}

export type FileRef = ArtifactFile | MemoryFileRef;

/** The file an exact path names, or a message for the model saying what is wrong with the path. */
export function resolveFilePath(tool: string, path: string, attached: readonly MemoryAttachmentDefinition[] = []): FileRef | { error: string } {
  if (!path.startsWith("/")) return { error: `${tool} takes an absolute path such as /artifacts/art_… or /memory/<store>/<file>; got ${JSON.stringify(path)}.` };
  const segments = path.slice(1).split("/");
  if (segments[0] === MEMORY_DIR) return resolveMemoryPath(tool, path, attached);
  if (segments[0] !== ARTIFACTS_DIR) {
    return { error: `${JSON.stringify(path)} is not a stored file: svc's files are your artifacts, /artifacts/<artifact_id>, and attached memory, /memory/<store>/<file>; list_files /* lists them.` };
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
  return { kind: "artifact", artifactId, path };
}

/** The attached store `/memory/<store>/…` names, or a message; `rest` is what follows the store's segment. */
export function resolveMemoryStore(path: string, attached: readonly MemoryAttachmentDefinition[]): { store: MemoryAttachmentDefinition; rest: string } | { error: string } {
  if (attached.length === 0) return { error: NO_MEMORY };
  const [, , name = "", ...rest] = path.split("/");
  const store = attached.find((entry) => entry.name === name);
  if (!store) {
    const names = attached.map((entry) => entry.name).join(", ");
    return { error: `No memory store ${JSON.stringify(name)} is attached to this agent; its stores are ${names} (list_files /memory/* lists them with their descriptions).` };
  }
  return { store, rest: rest.join("/") };
}

function resolveMemoryPath(tool: string, path: string, attached: readonly MemoryAttachmentDefinition[]): MemoryFileRef | { error: string } {
  const found = resolveMemoryStore(path, attached);
  if ("error" in found) return found;
  const { store, rest } = found;
  if (rest === "") return { error: `/memory/${store.name} is a directory; ${tool} takes one file, /memory/${store.name}/<file> (list_files /memory/${store.name}/** lists them).` };
  if (/[*?]/.test(rest) && tool !== "write_file") return { error: `${tool} takes one exact path, not a pattern; find the file with list_files first.` };
  const problem = pathProblem(rest);
  if (problem) return { error: `${JSON.stringify(path)} is not a valid memory file path: the part after /memory/${store.name}/ ${problem}.` };
  return { kind: "memory", store, file: rest, path };
}

export const notFound = (path: string) =>
  path.startsWith(`/${MEMORY_DIR}/`)
    ? `No file ${path} exists; list_files ${path.split("/").slice(0, 3).join("/")}/** lists the store's files.`
    : `No artifact ${path} exists among this agent's artifacts; list_files /artifacts/* lists them.`;
