import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll } from "vitest";
import { verifyWebhook, type WebhookEvent } from "@svc/sdk";

/** One request the receiver got: its headers and its body exactly as sent. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status it was answered with. */
  answered: number;
}

/**
 * A webhook receiver on loopback, as a svc user would run one: it records every POST and answers 204, or
 * the statuses queued with `answerNext` first. `verified` checks a request with the SDK's verifier.
 */
export interface WebhookReceiver {
  url: string;
  port: number;
  received: ReceivedWebhook[];
  /** Statuses for the next requests, in order (e.g. 500 then the default 204). */
  answerNext(...statuses: number[]): void;
  ofType(type: string): ReceivedWebhook[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const queued: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const answered = queued.shift() ?? 204;
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/hook`,
    port: bound,
    received,
    answerNext: (...statuses) => void queued.push(...statuses),
    ofType: (type) => received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function useWebhookReceiver(): WebhookReceiver {
  let current: WebhookReceiver | undefined;
  beforeAll(async () => {
    current = await startWebhookReceiver();
  });
  afterAll(async () => {
    await current?.close();
  });
  const running = (): WebhookReceiver => {
    if (!current) throw new Error("the receiver starts in beforeAll; use it inside hooks and tests");
    return current;
  };
  return {
    get url() {
      return running().url;
    },
    get port() {
      return running().port;
    },
    get received() {
      return running().received;
    },
    answerNext: (...statuses) => running().answerNext(...statuses),
    ofType: (type) => running().ofType(type),
    close: () => running().close(),
  };
}

/** The request checked with the SDK's verifier under `secret`, as a receiver would: its parsed body. */
export function verified(secret: string, request: ReceivedWebhook): Promise<WebhookEvent> {
  return verifyWebhook(secret, request.headers as Record<string, string>, request.body);
}
