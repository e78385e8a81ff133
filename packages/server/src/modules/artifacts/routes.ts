import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses } from "../../platform/http/schemas.js";
import * as s from "./schemas.js";
import type { ArtifactsService } from "./service.js";
import { artifactView, contentDisposition } from "./views.js";

/** Raw bytes in the OpenAPI document; the handler sends a Buffer, which Fastify writes as is. */
const Bytes = Type.Unsafe<Buffer>({ type: "string", format: "binary" });

/** Artifacts never change once written, so a browser may keep them; `private` keeps shared caches out. */
const CACHE_CONTROL = "private, max-age=31536000, immutable";

export function artifactRoutes(app: HttpApp, deps: { artifacts: ArtifactsService }) {
  const { artifacts } = deps;
  const target = (params: { orgID: string; projectID: string; agentID: string; artifactID: string }) =>
    [...projectPath(params), pathId("agent", params.agentID), pathId("artifact", params.artifactID)] as const;

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/artifacts/:artifactID",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getArtifact",
        summary: "Get an artifact",
        description: "A file of the agent's timeline, referenced from content blocks as media_ref (agent.read).",
        params: s.ArtifactParams,
        response: { 200: s.Artifact, ...errorResponses() },
      },
    },
    async (request) => artifactView(await artifacts.getArtifact(request.principal!, ...target(request.params))),
  );

  app.get(
    "/orgs/:orgID/projects/:projectID/agents/:agentID/artifacts/:artifactID/content",
    {
      schema: {
        tags: [s.TAG],
        operationId: "getArtifactContent",
        summary: "Download an artifact's content",
        description:
          "The artifact's bytes with its content type, as a download (agent.read). Content never changes, so clients may " +
          "cache it.",
        params: s.ArtifactParams,
        response: {
          200: { description: "The artifact's bytes.", content: { "*/*": { schema: Bytes } } },
          ...errorResponses(),
        },
      },
    },
    async (request, reply) => {
      const { row, bytes } = await artifacts.getArtifactContent(request.principal!, ...target(request.params));
      return reply
        .header("content-type", row.contentType)
        .header("content-length", bytes.length)
        .header("content-disposition", contentDisposition(row.filename))
        .header("x-content-type-options", "nosniff")
        // Defense in depth should a browser render it anyway: no scripts, no subresources.
        .header("content-security-policy", "default-src 'none'; sandbox")
        .header("cache-control", CACHE_CONTROL)
        .send(bytes);
    },
  );
}
