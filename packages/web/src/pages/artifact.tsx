import { api, call } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys } from "../query";

/**
 * A `media_ref` block of the timeline: an image artifact shows inline (alt text: its filename), anything else
 * as a link. Both read `…/artifacts/{id}/content`, which the browser's session cookie authenticates; the
 * console's Content-Security-Policy allows same-origin images (`img-src 'self'`).
 */
export function ArtifactView({ ids, artifactID }: { ids: { orgID: string; projectID: string; agentID: string }; artifactID: string }) {
  const path = { ...ids, artifactID };
  const meta = useQuery({
    queryKey: keys.artifact(ids.orgID, ids.projectID, ids.agentID, artifactID),
    staleTime: Infinity,
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}/artifacts/{artifactID}", { params: { path } })),
  });
  const href = `/api/v1/orgs/${enc(ids.orgID)}/projects/${enc(ids.projectID)}/agents/${enc(ids.agentID)}/artifacts/${enc(artifactID)}/content`;
  const artifact = meta.data;
  const name = artifact?.filename || artifactID;
  if (artifact?.content_type?.startsWith("image/")) {
    return (
      <figure className="artifact">
        <a href={href} target="_blank" rel="noopener">
          <img src={href} alt={name} loading="lazy" />
        </a>
        <figcaption className="small muted">
          {name} · {artifact.content_type}
          {artifact.size_bytes !== undefined ? ` · ${formatSize(artifact.size_bytes)}` : ""}
        </figcaption>
      </figure>
    );
  }
  return (
    <p>
      Artifact <a href={href}>{name}</a>
      {artifact?.content_type ? <span className="small muted"> ({artifact.content_type})</span> : null}
    </p>
  );
}

const enc = encodeURIComponent;

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
