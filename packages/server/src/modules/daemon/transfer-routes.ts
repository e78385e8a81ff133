import { Type } from "typebox";
import type { FastifySchemaCompiler } from "fastify";
import type { HttpApp } from "../../platform/http/app.js";
import type { DaemonPrincipal } from "../../platform/http/auth.js";
import { pathId } from "../../platform/http/params.js";
import { errorResponses, Id } from "../../platform/http/schemas.js";
import { validatorCompiler } from "../../platform/http/validation.js";
import { AppError } from "../../platform/errors.js";
import { TAG } from "./schemas.js";
import { MAX_TRANSFER_BYTES, type TransferService } from "./transfer-service.js";

/*
 * The daemon transfer routes (reference operations 142 and 143, hidden there too): svcd's upload_file and
 * download_file processes move a file's bytes through them. Daemon tokens only (`auth: "daemon"`); the
 * rules are in transfer-service.ts.
 */

const Bytes = Type.Unsafe<Buffer>({ type: "string", format: "binary" });
const ToolCallParams = Type.Object({ toolCallID: Id("toolCall") });
const ArtifactParams = Type.Object({ toolCallID: Id("toolCall"), artifactID: Id("artifact") });
const UploadQuery = Type.Object({ filename: Type.String({ minLength: 1, maxLength: 255 }) }, { additionalProperties: false });
const UploadArtifactResponse = Type.Object(
  {
    artifact_id: Type.Optional(Id("artifact")),
    path: Type.Optional(Type.String({ description: "A memory upload: the file's path, /memory/<store>/<file>." })),
    digest: Type.Optional(Type.String({ description: "A memory upload: the digest of the version written." })),
  },
  { additionalProperties: false },
);

/** The body is raw bytes, checked in the handler; the body schema only documents it. */
const bytesCheckedInHandler: FastifySchemaCompiler<unknown> = (route) => (route.httpPart === "body" ? () => true : validatorCompiler(route));

export async function daemonTransferRoutes(app: HttpApp, deps: { transfers: TransferService }) {
  const { transfers } = deps;
  const config = { auth: "daemon" as const };
  const caller = (request: { daemon: DaemonPrincipal | null }) => request.daemon!;

  // The octet-stream parser and its 10 MiB limit live in this scope only; a larger body is 413 before it is read whole.
  await app.register(async (plain) => {
    const scope = plain as HttpApp;
    scope.addContentTypeParser("application/octet-stream", { parseAs: "buffer", bodyLimit: MAX_TRANSFER_BYTES }, (_request, body, done) => done(null, body));
    scope.post(
      "/daemon/tool-calls/:toolCallID/artifact",
      {
        config,
        bodyLimit: MAX_TRANSFER_BYTES,
        validatorCompiler: bytesCheckedInHandler,
        schema: {
          tags: [TAG],
          operationId: "uploadDaemonArtifact",
          summary: "Upload a tool call's file (daemon)",
          description:
            "svcd's upload_file process posts the machine file (application/octet-stream, 1 byte to 10 MiB) for its tool call; " +
            "svc stores it as an artifact of the call's agent, or for an upload into a memory store as the file's next version " +
            "(answering its path and digest; a stale expected_digest is 409 file_content_conflict), once per call. Only while " +
            "the call's process runs on this daemon's machine (403 after; another machine's call is 404); 413 above 10 MiB.",
          params: ToolCallParams,
          querystring: UploadQuery,
          body: { content: { "application/octet-stream": { schema: Bytes } } },
          response: { 201: UploadArtifactResponse, ...errorResponses(409, 413, 415) },
        },
      },
      async (request, reply) => {
        // An empty body (an empty memory file) may reach here without the parser running.
        const body = Buffer.isBuffer(request.body) ? request.body : request.headers["content-length"] === "0" ? Buffer.alloc(0) : undefined;
        if (!body) throw new AppError("unsupported_media_type", "send the file's bytes as application/octet-stream");
        const created = await transfers.upload(caller(request), pathId("toolCall", request.params.toolCallID), request.query.filename, body);
        return reply.status(201).send(created);
      },
    );
  });

  app.get(
    "/daemon/tool-calls/:toolCallID/memory/content",
    {
      config,
      schema: {
        tags: [TAG],
        operationId: "downloadDaemonMemoryFile",
        summary: "Download a tool call's memory file (daemon)",
        description:
          "svcd's download_file process fetches the memory file its tool call names, as the version that was current when " +
          "the call was dispatched (UTF-8 text). Only while the call's process runs on this daemon's machine (403 after; " +
          "another machine's call, or a call that names no memory file, is 404).",
        params: ToolCallParams,
        response: { 200: { description: "The file's bytes.", content: { "text/plain": { schema: Bytes } } }, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const bytes = await transfers.downloadMemory(caller(request), pathId("toolCall", request.params.toolCallID));
      return reply.header("content-type", "text/plain; charset=utf-8").header("content-length", bytes.length).header("x-content-type-options", "nosniff").send(bytes);
    },
  );

  app.get(
    "/daemon/tool-calls/:toolCallID/artifacts/:artifactID/content",
    {
      config,
      schema: {
        tags: [TAG],
        operationId: "downloadDaemonArtifact",
        summary: "Download a tool call's artifact (daemon)",
        description:
          "svcd's download_file process fetches the artifact its tool call names, with the artifact's content type. Only " +
          "while the call's process runs on this daemon's machine (403 after; another machine's call or another artifact is 404).",
        params: ArtifactParams,
        response: { 200: { description: "The artifact's bytes.", content: { "*/*": { schema: Bytes } } }, ...errorResponses() },
      },
    },
    async (request, reply) => {
      const { row, bytes } = await transfers.download(caller(request), pathId("toolCall", request.params.toolCallID), pathId("artifact", request.params.artifactID));
      return reply.header("content-type", row.contentType).header("content-length", bytes.length).header("x-content-type-options", "nosniff").send(bytes);
    },
  );
}
