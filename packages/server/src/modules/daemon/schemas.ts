import { PROTOCOL_ID_PREFIXES } from "@svc/protocol";
import { Type } from "typebox";
import type { ID_PREFIXES } from "../../platform/ids.js";
import { Id } from "../../platform/http/schemas.js";

/*
 * The daemon routes' own schemas. The messages of the daemon protocol (bodies, frames) are in
 * @svc/protocol (packages/protocol), which svcd shares.
 */

export const TAG = "Machine Daemon";

export const RuntimeParams = Type.Object({ runtimeID: Id("daemonRuntime") });

// @svc/protocol spells out the prefixes of the ids it carries; the compiler checks that they are svc's.
PROTOCOL_ID_PREFIXES satisfies Pick<typeof ID_PREFIXES, keyof typeof PROTOCOL_ID_PREFIXES>;
