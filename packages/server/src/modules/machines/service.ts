import { createMachineGrantService } from "./grants-service.js";
import { createMachineService } from "./machines-service.js";
import { createPoolGrantService } from "./pool-grants-service.js";
import { createPoolService, type PoolServiceDeps } from "./pools-service.js";
import { createDaemonTokenService } from "./tokens-service.js";

/** The machines area: BYO machines, their daemon tokens, project machine grants, pools and pool grants. */
export function createMachinesService(deps: PoolServiceDeps) {
  return {
    ...createMachineService(deps),
    ...createDaemonTokenService(deps),
    ...createMachineGrantService(deps),
    ...createPoolService(deps),
    ...createPoolGrantService(deps),
  };
}

export type MachinesService = ReturnType<typeof createMachinesService>;
