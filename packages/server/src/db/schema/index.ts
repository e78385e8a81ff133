export * from "./identity.js";
export * from "./orgs.js";
export * from "./secrets.js";
export * from "./platform.js";
export * from "./models.js";
export * from "./agents.js";
export * from "./timeline.js";
export * from "./machines.js";
