import type { Database, Tx } from "../../platform/db/index.js";
import { AppError } from "../../platform/errors.js";
import { jsonDigest } from "../../platform/json.js";
import { lockAgent } from "../../runtime/store/journal.js";
import { findConfig } from "../agent-configs/service.js";
import { launchInTx } from "../agents/service.js";
import type { ArtifactsService } from "../artifacts/service.js";
import { enqueueContentInput } from "../inputs/service.js";
import { isModelGranted } from "../models/grants-service.js";
import type { AgentDefinition } from "../../runtime/definition.js";
import { integrationFiring } from "./integration-target.js";
import { FiringFailure, type Firing, type FiringHandler } from "./scheduler.js";

/**
 * What a cron trigger's firing does, by target type: sends the message to an agent as a queued input,
 * launches an agent from a profile's current config with it, or leaves an integration the receipt that
 * posts and launches (integration-target.ts). Both go through the inputs and agents
 * modules' own functions, inside the firing's transaction, so the effect commits with the advance.
 */
export function cronTargets(deps: { db: Database; artifacts: ArtifactsService }): Record<string, FiringHandler> {
  // A text block is checked in memory: nothing is uploaded, so this may run inside the transaction.
  const prepare = (text: string) => deps.artifacts.prepareContentBlocks([{ type: "text", text }], new Set(["text"]));

  return {
    integration: integrationFiring,
    agent: {
      async fire(tx: Tx, { trigger, message }: Firing) {
        const agent = await lockAgent(tx, trigger.agentId!);
        // The agent row outlives archiving; only its project's deletion removes it, and the trigger with it.
        if (!agent || agent.state !== "active") throw new FiringFailure("the target agent is archived; the trigger was disabled", "disable");
        const config = await findConfig(tx, trigger.orgId, trigger.projectId, agent.currentConfigId);
        if (config) await requireModelGrant(tx, trigger.projectId, config.compiledDefinition.model);
        const digest = jsonDigest({ mode: "queued", actor: null, blocks: [{ type: "text", text: message }], cancel: false });
        await enqueueContentInput(tx, deps, agent, { deliveryMode: "queued", actorId: null, prepared: await prepare(message), key: null, digest });
      },
    },
    profile: {
      async fire(tx: Tx, { trigger, message }: Firing) {
        try {
          // Checked after the launch, whose config it names: failing rolls the launch back with the firing.
          const { config } = await launchInTx(tx, deps, {
            orgId: trigger.orgId,
            projectId: trigger.projectId,
            profileId: trigger.agentProfileId!,
            message: { text: message, prepared: await prepare(message), actorId: null },
            key: null,
          });
          await requireModelGrant(tx, trigger.projectId, config.compiledDefinition.model);
        } catch (err) {
          if (err instanceof AppError && err.code === "not_found") {
            throw new FiringFailure(`the target ${err.message.replace(/ not found$/, "")} was deleted; the trigger was disabled`, "disable");
          }
          // Anything else the launch refuses (a machine the config names is offline…) may pass: retry later.
          if (err instanceof AppError) throw new FiringFailure(`the agent could not be launched: ${err.message}`, "retry");
          throw err;
        }
      },
    },
  };
}

/** A model the project lost may be granted again: the firing is retried with backoff, not disabled. */
async function requireModelGrant(tx: Tx, projectId: string, model: AgentDefinition["model"]): Promise<void> {
  if (!(await isModelGranted(tx, projectId, model))) {
    throw new FiringFailure(`the model "${model.name}" is not granted to this project; the firing will be retried`, "retry");
  }
}
