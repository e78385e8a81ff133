import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { assertOutboundAllowed, guardedLookup, type OutboundPolicy } from "./outbound.js";

export interface OutboundGetOptions {
  headers: Record<string, string>;
  /** Whole-exchange deadline: connecting, headers and body. */
  timeoutMs: number;
  /** A larger body is an error rather than a memory problem. */
  maxBytes: number;
}

export interface OutboundResponse {
  status: number;
  body: Buffer;
}

/** The response was larger than allowed, or did not finish in time. */
export class OutboundTransferError extends Error {
  override name = "OutboundTransferError";
}

/**
 * One guarded GET to a tenant-chosen URL: the SSRF guard before and during connection, no redirects
 * followed (a redirect is returned as its status), a deadline and a size cap. Rejects with
 * `OutboundRefusedError`, `OutboundTransferError` or the transport's own error.
 */
export async function outboundGet(url: string, options: OutboundGetOptions, policy: OutboundPolicy): Promise<OutboundResponse> {
  return exchange("GET", url, options, undefined, policy);
}

/** One guarded POST of `body` to a tenant-chosen URL, with the same guard, deadline, cap and no redirects as `outboundGet` (webhook deliveries). */
export async function outboundPost(url: string, body: string, options: OutboundGetOptions, policy: OutboundPolicy): Promise<OutboundResponse> {
  return exchange("POST", url, options, body, policy);
}

async function exchange(method: "GET" | "POST", url: string, options: OutboundGetOptions, body: string | undefined, policy: OutboundPolicy): Promise<OutboundResponse> {
  const target = new URL(url);
  await assertOutboundAllowed(target, policy);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<OutboundResponse>((resolve, reject) => {
    const req = send(target, { method, headers: options.headers, lookup: guardedLookup(policy) });
    const timer = setTimeout(() => req.destroy(new OutboundTransferError(`no complete answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      reject(err);
    };
    req.once("error", fail);
    req.once("response", (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) {
          req.destroy(new OutboundTransferError(`response is larger than ${options.maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.once("error", fail);
      res.once("end", () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) });
      });
    });
    req.end(body);
  });
}
