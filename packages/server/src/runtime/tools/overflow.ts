import type { MediaType } from "../../modules/artifacts/schemas.js";
import type { ArtifactsService, PreparedBlocks } from "../../modules/artifacts/service.js";
import { encodeId } from "../../platform/ids.js";

/*
 * The reference's overflow rule for tool results (docs/tools): a result over 50 KiB is saved whole as an
 * artifact, and the model gets an 8 KiB preview with the artifact's path in its place. One place for the
 * rule, so every tool that can return much (`skill`, `run_command`) cuts and saves the same way.
 */

export const OVERFLOW_BYTES = 50 * 1024;
const PREVIEW_BYTES = 8 * 1024;
const MEDIA = new Set(["media"] as const);

/** The first 8 KiB of `text`, cut on a byte boundary; a character split there decodes to U+FFFD, which is dropped. */
export function previewOf(text: string): string {
  return Buffer.from(text, "utf8").subarray(0, PREVIEW_BYTES).toString("utf8").replace(/\uFFFD+$/, "");
}

export interface SavedText {
  /** The artifact and its media block, to record with the result. */
  stored: PreparedBlocks;
  /** Where the whole text is, for the preview the model gets. */
  ref: { path: string; size_bytes: number; content_type: string };
}

/** Saves `text` whole as an artifact of `contentType`. */
export async function saveAsArtifact(artifacts: Pick<ArtifactsService, "prepareContentBlocks">, text: string, contentType: MediaType, filename: string): Promise<SavedText> {
  const data = Buffer.from(text, "utf8");
  const stored = await artifacts.prepareContentBlocks([{ type: "media", media_type: contentType, filename, data: data.toString("base64") }], MEDIA);
  const path = `/artifacts/${encodeId("artifact", stored.artifacts[0]!.id)}`;
  return { stored, ref: { path, size_bytes: data.length, content_type: contentType } };
}
