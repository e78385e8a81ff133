import { createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook, WebhookVerificationError } from "@svc/sdk";

/*
 * The verifier against signatures made independently, with Node's own HMAC, as the Standard Webhooks
 * specification defines them. The server's end-to-end webhook tests verify real deliveries with it too.
 */
const secret = `whsec_${randomBytes(32).toString("base64")}`;
const other = `whsec_${randomBytes(32).toString("base64")}`;
const now = 1_800_000_000;
const body = JSON.stringify({ type: "agent.idle", timestamp: "2027-01-15T08:00:00.000Z", data: { agent_id: "agt_x" } });

function sign(key: string, id: string, timestamp: number, payload: string): string {
  return `v1,${createHmac("sha256", Buffer.from(key.slice("whsec_".length), "base64")).update(`${id}.${timestamp}.${payload}`).digest("base64")}`;
}

const headers = (signature: string, timestamp = now) => ({ "webhook-id": "msg_1", "webhook-timestamp": String(timestamp), "webhook-signature": signature });

describe("verifyWebhook", () => {
  it("answers the parsed body of a delivery signed with the secret, from a headers record or a Headers object, text or bytes", async () => {
    const signature = sign(secret, "msg_1", now, body);
    expect(await verifyWebhook(secret, headers(signature), body, { nowSeconds: now })).toEqual(JSON.parse(body));
    const fetchHeaders = new Headers(headers(signature));
    expect((await verifyWebhook(secret, fetchHeaders, new TextEncoder().encode(body), { nowSeconds: now })).type).toBe("agent.idle");
  });

  it("accepts any one of several signatures (a rotation's old and new secret)", async () => {
    const both = `${sign(other, "msg_1", now, body)} ${sign(secret, "msg_1", now, body)}`;
    expect((await verifyWebhook(secret, headers(both), body, { nowSeconds: now })).type).toBe("agent.idle");
    expect((await verifyWebhook(other, headers(both), body, { nowSeconds: now })).type).toBe("agent.idle");
  });

  it("refuses another secret, a changed body or id, a missing header and a timestamp outside the tolerance", async () => {
    const signature = sign(secret, "msg_1", now, body);
    const refusals = [
      () => verifyWebhook(other, headers(signature), body, { nowSeconds: now }),
      () => verifyWebhook(secret, headers(signature), body.replace("agt_x", "agt_y"), { nowSeconds: now }),
      () => verifyWebhook(secret, { ...headers(signature), "webhook-id": "msg_2" }, body, { nowSeconds: now }),
      () => verifyWebhook(secret, { "webhook-id": "msg_1", "webhook-timestamp": String(now) }, body, { nowSeconds: now }),
      () => verifyWebhook(secret, headers(signature), body, { nowSeconds: now + 301 }),
      () => verifyWebhook(secret, headers(sign(secret, "msg_1", now - 10, body), now - 10), body, { nowSeconds: now, toleranceSeconds: 5 }),
      () => verifyWebhook(secret, headers(signature.replace("v1,", "v2,")), body, { nowSeconds: now }),
    ];
    for (const refusal of refusals) await expect(refusal()).rejects.toBeInstanceOf(WebhookVerificationError);
  });
});
