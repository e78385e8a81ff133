import { unwrap, type SvcClient } from "./client.js";
import type { components } from "./generated/openapi.js";
import { SvcError } from "./errors.js";
import { sleep } from "./sleep.js";

export type DeviceCode = components["schemas"]["DeviceCodeResponse"];

/**
 * Starts a device login (spec, Device login): show the user `user_code` and `verification_uri`, or open
 * `verification_uri_complete`, then `waitForDeviceLogin`.
 */
export function startDeviceLogin(client: SvcClient, names: { client_name?: string; token_name?: string } = {}): Promise<DeviceCode> {
  return unwrap(client.POST("/api/auth/device/code", { body: names }));
}

/**
 * Polls until the user decides and returns the personal access token. It waits `interval` seconds
 * between polls, takes the longer interval a `slow_down` answer gives, and stops at the code's lifetime.
 * A denial or expiry throws an SvcError whose code is `access_denied` or `expired_token`.
 */
export async function waitForDeviceLogin(client: SvcClient, code: DeviceCode, options: { signal?: AbortSignal } = {}): Promise<string> {
  const deadline = Date.now() + code.expires_in * 1000;
  let interval = code.interval;
  for (;;) {
    await sleep(interval * 1000, options.signal);
    const { data, error, response } = await client.POST("/api/auth/device/token", { body: { device_code: code.device_code }, ...(options.signal ? { signal: options.signal } : {}) });
    if (response.status === 200 && data && "access_token" in data) return data.access_token;
    if (response.status === 202 && data && "interval" in data) {
      interval = Math.max(interval, data.interval);
    } else if (response.status === 429) {
      // Rate limited (SVC_RATE_LIMIT_DEVICE): back off as a slow_down would (RFC 8628 §3.5, 5 s more).
      interval += 5;
    } else {
      throw SvcError.from(response.status, error);
    }
    if (Date.now() > deadline + interval * 1000) throw new SvcError(400, "expired_token", "the device code expired before it was approved");
  }
}
