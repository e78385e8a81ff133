import { sql } from "drizzle-orm";
import type { Database, Tx } from "../../platform/db/index.js";
import type { AgentDelegates } from "../../runtime/tools/delegation-tools.js";
import type { AgentRow } from "../../runtime/store/journal.js";
import { jsonDigest } from "../../platform/json.js";
import { AppError } from "../../platform/errors.js";
import type { ArtifactsService } from "../artifacts/service.js";
import { enqueueContentInput } from "../inputs/service.js";
import { launchInTx } from "./service.js";

/**
 * The engine's `AgentDelegates` port (runtime/tools/delegation-tools.ts): a coordinator's child is an ordinary
 * agent launched the way the launch route launches one, from its profile's current config, inside the
 * claim's transaction, with `parent_agent_id`, `root_agent_id` and its depth set. Its opening message is
 * queued and attributed to no actor: it comes from the coordinator, named by the parent columns.
 */
export function createAgentDelegates(deps: { db: Database; artifacts: ArtifactsService }): AgentDelegates {
  const prepared = async (message: string) => deps.artifacts.prepareContentBlocks([{ type: "text", text: message }], new Set(["text"]));
  const digest = (message: string) => jsonDigest({ mode: "queued", actor: null, blocks: [{ type: "text", text: message }], cancel: false });

  return {
    async launchChild(tx: Tx, coordinator: AgentRow, input) {
      // Text only: preparing it reads and writes nothing.
      const blocks = await prepared(input.message);
      // A refused launch (its profile deleted since the config was compiled, machines it can no longer bind)
      // is the model's tool error, and nothing of it may stay: the savepoint takes back what it wrote.
      await tx.execute(sql`SAVEPOINT delegate_launch`);
      try {
        const launched = await launchInTx(tx, deps, {
          orgId: coordinator.orgId,
          projectId: coordinator.projectId,
          profileId: input.profileId,
          name: input.handle,
          message: { text: input.message, prepared: blocks, actorId: null },
          key: input.key,
          parent: coordinator,
        });
        await tx.execute(sql`RELEASE SAVEPOINT delegate_launch`);
        return { ok: true as const, agent: launched.agent.agent, inputId: launched.input!.id };
      } catch (err) {
        if (err instanceof AppError) {
          await tx.execute(sql`ROLLBACK TO SAVEPOINT delegate_launch`);
          return { ok: false as const, message: `The delegate could not be launched: ${err.message}` };
        }
        throw err;
      }
    },

    async sendToChild(tx: Tx, child: AgentRow, message: string) {
      const input = await enqueueContentInput(tx, deps, child, { deliveryMode: "queued", actorId: null, prepared: await prepared(message), key: null, digest: digest(message) });
      return { inputId: input.id };
    },
  };
}
