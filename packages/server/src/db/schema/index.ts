export * from "./identity.js";
export * from "./orgs.js";
export * from "./secrets.js";
export * from "./platform.js";
export * from "./models.js";
