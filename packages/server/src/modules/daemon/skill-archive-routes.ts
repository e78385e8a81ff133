import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Id } from "../../platform/http/schemas.js";
import { idPattern } from "../../platform/ids.js";
import { TAG } from "./schemas.js";
import type { SkillInstallService } from "./skill-installs.js";

/** Raw bytes in the OpenAPI document; the handler sends a Buffer, which Fastify writes as is. */
const Bytes = Type.Unsafe<Buffer>({ type: "string", format: "binary" });

const ArchiveParams = Type.Object({ skillID: Id("skill") });
const ArchiveQuery = Type.Object(
  {
    revision_id: Type.String({ pattern: idPattern("skillRevision") }),
    expires_at: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "The token's expiry, in Unix seconds, as the skill_offer gave it." }),
    download_token: Type.String({ minLength: 64, maxLength: 64 }),
  },
  { additionalProperties: false },
);

/**
 * `GET /daemon/skills/{skillID}/archive` (reference operation getDaemonSkillArchive): a skill revision's
 * archive (the .tar.gz svc wrote from the checked upload) for the daemon a `skill_offer` gave a download token to.
 */
export function skillArchiveRoutes(app: HttpApp, deps: { skillInstalls: Pick<SkillInstallService, "skillArchive"> }) {
  app.get(
    "/daemon/skills/:skillID/archive",
    {
      config: { auth: "daemon" as const },
      schema: {
        tags: [TAG],
        operationId: "getDaemonSkillArchive",
        summary: "Download a skill archive (daemon)",
        description:
          "The skill revision's archive (the .tar.gz svc wrote from the checked upload; its digest in x-svc-digest) for the daemon a skill_offer " +
          "gave the download token to. The token is bound to the daemon's machine, the skill and the revision: 403 for any " +
          "other, 410 once it expired, 404 when the skill or revision is gone.",
        params: ArchiveParams,
        querystring: ArchiveQuery,
        response: {
          200: { description: "The archive's bytes.", content: { "application/octet-stream": { schema: Bytes } } },
          ...errorResponses(410),
        },
      },
    },
    async (request, reply) => {
      const { bytes, digest } = await deps.skillInstalls.skillArchive(request.daemon!, pathId("skill", request.params.skillID), request.query);
      return reply
        .header("content-type", "application/octet-stream")
        .header("content-length", bytes.length)
        .header("x-svc-digest", digest)
        .header("cache-control", "no-store")
        .send(bytes);
    },
  );
}
