import { iso } from "../../platform/http/schemas.js";
import { encodeId } from "../../platform/ids.js";
import type { ArtifactRow } from "./store.js";

export function artifactView(row: ArtifactRow) {
  return {
    id: encodeId("artifact", row.id),
    org_id: encodeId("org", row.orgId),
    project_id: encodeId("project", row.projectId),
    agent_id: encodeId("agent", row.agentId),
    content_type: row.contentType,
    ...(row.filename !== null ? { filename: row.filename } : {}),
    digest: row.digest,
    size_bytes: row.sizeBytes,
    created_at: iso(row.createdAt),
  };
}

/**
 * Always a download, never rendered in svc's origin. The quoted `filename` is an ASCII stand-in for
 * old clients; `filename*` carries the real name in UTF-8 (RFC 6266, RFC 8187).
 */
export function contentDisposition(filename: string | null): string {
  if (filename === null || filename === "") return "attachment";
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc8187(filename)}`;
}

/** Percent-encodes everything but RFC 8187's attr-char; encodeURIComponent leaves `'()*` alone, which it must not. */
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}
