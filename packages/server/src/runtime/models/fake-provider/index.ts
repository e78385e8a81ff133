export { startFakeProvider, type FakeProvider, type FakeProviderOptions } from "./server.js";
export type { FakeFormat, FakeReply, FakeStopReason, FakeToolCall, FakeUsage, RecordedRequest } from "./types.js";
