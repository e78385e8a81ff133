import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { SubmittedBlock } from "../../modules/artifacts/content.js";
import { MEDIA_TYPES, type MediaType } from "../../modules/artifacts/schemas.js";

/**
 * An MCP tool result as svc content blocks: text stays text, images and embedded files of a media type
 * svc stores become media blocks (stored as artifacts by the caller), structured content becomes one
 * structured_data block, and anything else is described in text so the model still learns it was there.
 */
export function resultBlocks(result: CallToolResult): SubmittedBlock[] {
  const blocks: SubmittedBlock[] = [];
  for (const item of result.content ?? []) {
    if (item.type === "text") blocks.push({ type: "text", text: clean(item.text) });
    else if (item.type === "image" || item.type === "audio") blocks.push(media(item.mimeType, item.data, `${item.type} (${item.mimeType})`));
    else if (item.type === "resource_link") blocks.push({ type: "text", text: clean(`Resource link: ${item.name} <${item.uri}>${item.description ? ` — ${item.description}` : ""}`) });
    else if (item.type === "resource") {
      const resource = item.resource;
      if ("text" in resource) blocks.push({ type: "text", text: clean(`Resource ${resource.uri}:\n${resource.text}`) });
      else blocks.push(media(resource.mimeType ?? "application/octet-stream", resource.blob, `resource ${resource.uri}`));
    }
  }
  if (result.structuredContent !== undefined) blocks.push({ type: "structured_data", value: result.structuredContent });
  if (blocks.length === 0) blocks.push({ type: "text", text: result.isError ? "The tool failed without saying why." : "The tool returned nothing." });
  return blocks;
}

/** Blocks that could not be kept as they came (too large, say), replaced by a note and the start of the text. */
export function fallbackBlocks(blocks: readonly SubmittedBlock[], reason: string): SubmittedBlock[] {
  const text = blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n\n");
  const head = text.length > MAX_FALLBACK_TEXT ? `${text.slice(0, MAX_FALLBACK_TEXT)}…` : text;
  return [{ type: "text", text: `The MCP server's result was cut down because ${reason}.${head ? `\n\n${head}` : ""}` }];
}

/** Well inside the 1 MiB of text a tool result may hold. */
const MAX_FALLBACK_TEXT = 256 * 1024;

function media(mimeType: string, data: string, what: string): SubmittedBlock {
  if (MEDIA_TYPES.includes(mimeType as MediaType)) return { type: "media", media_type: mimeType as MediaType, data };
  return { type: "text", text: `[The tool returned ${what}, a media type svc does not keep.]` };
}

/** PostgreSQL text cannot hold U+0000. */
function clean(text: string): string {
  return text.replaceAll("\u0000", "\uFFFD");
}
