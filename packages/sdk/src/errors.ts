import type { components } from "./generated/openapi.js";

export type Issue = components["schemas"]["ErrorIssue"];

/**
 * A failed API call: the HTTP status and the spec's error envelope (`code`, `error`, and where the server
 * sent them `issues` and `current_digest`). `code` is extensible (spec, Errors): match it, never `message`.
 */
export class SvcError extends Error {
  override readonly name = "SvcError";
  readonly status: number;
  readonly code: string;
  readonly issues: Issue[];
  readonly current_digest: string | undefined;

  constructor(status: number, code: string, message: string, extra: { issues?: Issue[]; current_digest?: string } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.issues = extra.issues ?? [];
    this.current_digest = extra.current_digest;
  }

  /** The error a response body stands for; a body that is not the envelope (a proxy's page) still gives one. */
  static from(status: number, body: unknown): SvcError {
    if (isRecord(body) && typeof body["error"] === "string") {
      // Device-login routes answer RFC 8628 `{error}` bodies, whose error is the code itself (spec, Errors).
      const code = typeof body["code"] === "string" ? body["code"] : body["error"];
      return new SvcError(status, code, body["error"], {
        issues: Array.isArray(body["issues"]) ? body["issues"].filter(isIssue) : [],
        ...(typeof body["current_digest"] === "string" ? { current_digest: body["current_digest"] } : {}),
      });
    }
    const text = typeof body === "string" && body.length > 0 ? body.slice(0, 200) : `HTTP ${status}`;
    return new SvcError(status, status >= 500 ? "internal_error" : "invalid_request", text);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIssue(value: unknown): value is Issue {
  return isRecord(value) && typeof value["path"] === "string" && typeof value["message"] === "string";
}
