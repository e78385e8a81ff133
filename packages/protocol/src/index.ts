/*
 * The daemon protocol between svc and svcd (docs/architecture.md, "The daemon protocol"): the HTTP bodies of
 * bootstrap and registration, and the `{type, payload}` frames of the runtime's WebSocket, as TypeBox
 * schemas with their types. svc validates, serializes and documents with the schemas; svcd uses the types.
 */

export { PROTOCOL_ID_PREFIXES } from "./fields.js";
export * from "./frames.js";
export * from "./offers.js";
export * from "./registration.js";
export * from "./reports.js";
