export { createClient, unwrap, type ClientOptions, type SvcClient } from "./client.js";
export { SvcError, type Issue } from "./errors.js";
export { paginate, collect, type CursorPage } from "./paginate.js";
export { followEvents, type FollowOptions, type StreamFrame, type Backoff, type Reconnect } from "./events.js";
export { startDeviceLogin, waitForDeviceLogin, type DeviceCode } from "./device-login.js";
export type { paths, components, operations } from "./generated/openapi.js";
export { svcdInstallCommand } from "./machines.js";
export { verifyWebhook, WebhookVerificationError, type WebhookEvent, type VerifyWebhookOptions } from "./webhooks.js";
