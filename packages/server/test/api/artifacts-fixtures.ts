import { randomBytes } from "node:crypto";
import { agentConfigs, agents } from "../../src/db/schema/index.js";
import { decodeId, encodeId, newUuid } from "../../src/platform/ids.js";
import type { TestServer } from "../support/server.js";

export interface InsertedAgent {
  publicId: string;
  /** The UUIDs an artifact is recorded under. */
  ids: { orgId: string; projectId: string; agentId: string };
  /** `/api/v1/orgs/{org}/projects/{project}/agents/{agent}` */
  path: string;
}

/**
 * An agent row to hang artifacts on. The launch route is being written alongside this module, so the
 * agent and a minimal agent_configs row (which it must point at) are inserted with Drizzle directly;
 * nothing here runs the agent or reads its config.
 */
export async function insertTestAgent(server: TestServer, orgPublicId: string, projectPublicId: string): Promise<InsertedAgent> {
  const orgId = decodeId("org", orgPublicId)!;
  const projectId = decodeId("project", projectPublicId)!;
  const agentId = newUuid();
  const unique = randomBytes(8).toString("hex");
  await server.db.tx(async (tx) => {
    const configId = newUuid();
    await tx.insert(agentConfigs).values({
      id: configId,
      orgId,
      projectId,
      source: "version: v1",
      sourceFormat: "yaml",
      sourceHash: unique,
      compilerVersion: "test",
      // Stored only; these tests never compile or run the agent.
      compiledDefinition: {} as typeof agentConfigs.$inferInsert.compiledDefinition,
      effectiveDefinitionHash: unique,
      instructionHash: unique,
      configuredModelId: newUuid(),
      configuredModelRevisionId: newUuid(),
    });
    await tx.insert(agents).values({ id: agentId, orgId, projectId, currentConfigId: configId });
  });
  const publicId = encodeId("agent", agentId);
  return { publicId, ids: { orgId, projectId, agentId }, path: `/api/v1/orgs/${orgPublicId}/projects/${projectPublicId}/agents/${publicId}` };
}

/** A GET whose body is bytes (the test client reads bodies as text). */
export async function getBytes(server: TestServer, path: string, token: string) {
  const response = await fetch(server.url + path, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}
