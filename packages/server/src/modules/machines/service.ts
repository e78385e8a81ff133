import type { Database } from "../../platform/db/index.js";
import type { SecretDirectory } from "./environment.js";
import { createMachineGrantService } from "./grants-service.js";
import { createMachineService } from "./machines-service.js";
import { createPoolGrantService } from "./pool-grants-service.js";
import { createPoolService } from "./pools-service.js";
import { createDaemonTokenService } from "./tokens-service.js";

/** The machines area: BYO machines, their daemon tokens, project machine grants, pools and pool grants. */
export function createMachinesService(deps: { db: Database; secrets: SecretDirectory }) {
  return {
    ...createMachineService(deps),
    ...createDaemonTokenService(deps),
    ...createMachineGrantService(deps),
    ...createPoolService(deps),
    ...createPoolGrantService(deps),
  };
}

export type MachinesService = ReturnType<typeof createMachinesService>;
