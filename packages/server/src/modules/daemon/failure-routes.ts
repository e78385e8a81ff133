import type { FastifySchemaCompiler } from "fastify";
import { Type, type Static } from "typebox";
import type { Database } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import type { HttpApp } from "../../platform/http/app.js";
import { errorResponses } from "../../platform/http/schemas.js";
import { validatorCompiler } from "../../platform/http/validation.js";
import { FAILURE_STAGES, OUTPUT_TAIL_CHARS, recordFailure } from "./failures.js";
import { TAG } from "./schemas.js";

const MAX_BODY_CHARS = OUTPUT_TAIL_CHARS + 1;

const FailureQuery = Type.Object(
  {
    stage: Type.Enum([...FAILURE_STAGES]),
    exit_status: Type.Optional(Type.Integer({ minimum: 1, maximum: 255 })),
    capture_status: Type.Optional(Type.Integer({ minimum: 0, maximum: 255 })),
    daemon_version: Type.Optional(Type.String({ maxLength: 100 })),
    target_version: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);

const FailureOutput = Type.String({ maxLength: MAX_BODY_CHARS, description: "The failure's output: its last 4,096 characters, and one more when there was more." });

/** The body is plain text, checked in the handler (it may be absent); the query is validated as everywhere. */
const textChecked: FastifySchemaCompiler<unknown> = (route) => (route.httpPart === "body" ? () => true : validatorCompiler(route));

/**
 * `POST /daemon/failures` (reference operation recordMachineFailure): the daemon reports a failure on its
 * machine; svc keeps it as the machine's `failure_report`. It takes plain text, so its text parser lives
 * in this scope only: every other route keeps answering 415 to text.
 */
export async function failureRoutes(app: HttpApp, deps: { db: Database }) {
  await app.register(async (scope) => {
    scope.addContentTypeParser("text/plain", { parseAs: "string", bodyLimit: 64 * 1024 }, (_request, body, done) => done(null, body));
    scope.post(
      "/daemon/failures",
      {
        config: { auth: "daemon" as const },
        validatorCompiler: textChecked,
        schema: {
          tags: [TAG],
          operationId: "recordMachineFailure",
          summary: "Report a machine failure (daemon)",
          description:
            "Records a failure the daemon met (stage daemon_start: svcd could not start or register, for a reason waiting will not " +
            "fix) as the machine's failure_report, replacing the previous one. A daemon that registers again clears it.",
          querystring: FailureQuery,
          body: { content: { "text/plain": { schema: FailureOutput } } },
          response: { 204: Type.Null(), ...errorResponses() },
        },
      },
      async (request, reply) => {
        const output = typeof request.body === "string" ? request.body : "";
        if (output.length > MAX_BODY_CHARS) {
          throw new AppError("validation_failed", `the output is longer than ${MAX_BODY_CHARS} characters`, { issues: [{ path: "", message: `must be at most ${MAX_BODY_CHARS} characters; send the last ${OUTPUT_TAIL_CHARS} and one more` }] });
        }
        // The body's per-content-type schema (documentation only) keeps the type provider from typing the query.
        const { stage, exit_status, daemon_version, target_version } = request.query as Static<typeof FailureQuery>;
        await recordFailure(deps.db.write, request.daemon!, { stage, exit_status, daemon_version, target_version, output });
        return reply.status(204).send(null);
      },
    );
  });
}
