import type { BootstrapDaemonResponse, RegisterDaemonRuntimeRequest, RegisterDaemonRuntimeResponse } from "@svc/protocol";

/** svc's daemon routes over HTTP: bootstrap, runtime registration and its end. Every request is bounded. */

const REQUEST_TIMEOUT_MS = 15_000;

/** svc refused the token (revoked, unknown, or its machine deleted): svcd must stop, not retry. */
export class TokenRefused extends Error {}
/** svc says this daemon instance was replaced by another one on the same machine. */
export class Superseded extends Error {}
/** Anything else: the network, a restarting svc. Worth retrying after a pause. */
export class Unavailable extends Error {}
/** svc refused the request itself (a 4xx other than the above, 408 and 429): retrying alone will not help. */
export class Rejected extends Unavailable {}

export class DaemonApi {
  constructor(
    readonly origin: string,
    /** Also handed to upload_file and download_file processes (transfer.ts), which call svc themselves. */
    readonly token: string,
  ) {}

  bootstrap(): Promise<BootstrapDaemonResponse> {
    return this.call<BootstrapDaemonResponse>("POST", "/api/v1/daemon/bootstrap");
  }

  register(body: RegisterDaemonRuntimeRequest): Promise<RegisterDaemonRuntimeResponse> {
    return this.call<RegisterDaemonRuntimeResponse>("POST", "/api/v1/daemon/runtimes", body);
  }

  end(runtimeId: string): Promise<unknown> {
    return this.call("POST", `/api/v1/daemon/runtimes/${encodeURIComponent(runtimeId)}/end`);
  }

  socketUrl(runtimeId: string): string {
    const url = new URL(`/api/v1/daemon/runtimes/${encodeURIComponent(runtimeId)}/socket`, this.origin);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    return url.toString();
  }

  get authorization(): string {
    return `Bearer ${this.token}`;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.origin), {
        method,
        headers: { authorization: this.authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? null : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new Unavailable(`svc is not reachable: ${(err as Error).message}`);
    }
    const text = await response.text().catch(() => "");
    const message = `${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`;
    if (response.status === 401 || response.status === 403) throw new TokenRefused(message);
    if (response.status === 410) throw new Superseded(message);
    if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) throw new Rejected(message);
    if (!response.ok) throw new Unavailable(message);
    return (text ? JSON.parse(text) : {}) as T;
  }
}
