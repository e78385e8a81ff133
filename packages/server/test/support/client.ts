/** A small HTTP client for tests: real requests, with cookie sessions, CSRF and bearer tokens. */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface BrowserSession {
  cookie: string;
  csrf: string;
  userId: string;
  email: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw request body, sent as is (for malformed JSON tests). */
  raw?: string;
  token?: string;
  session?: BrowserSession;
  /** Omit the CSRF header on a session request. */
  noCsrf?: boolean;
  headers?: Record<string, string>;
}

let userCounter = 0;

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly origin: string,
  ) {}

  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers["content-type"] ??= "application/json";
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    if (options.token) headers["authorization"] = `Bearer ${options.token}`;
    if (options.session) {
      headers["cookie"] = options.session.cookie;
      if (!options.noCsrf && method !== "GET") {
        headers["x-svc-csrf"] ??= options.session.csrf;
        headers["origin"] ??= this.origin;
      }
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body, redirect: "manual" });
    const text = await response.text();
    let parsed: unknown = text;
    if (response.headers.get("content-type")?.includes("application/json") && text) parsed = JSON.parse(text);
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>("GET", path, options);
  post = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>("POST", path, { ...options, body });
  put = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>("PUT", path, { ...options, body });
  patch = <T = any>(path: string, body?: unknown, options?: RequestOptions) => this.request<T>("PATCH", path, { ...options, body });
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>("DELETE", path, options);

  /** Signs a new user up and returns the browser session it got. */
  async signup(overrides: { email?: string; password?: string; display_name?: string } = {}): Promise<BrowserSession> {
    userCounter += 1;
    const email = overrides.email ?? `user${userCounter}-${Date.now()}@example.com`;
    const reply = await this.post("/api/auth/signup", {
      email,
      password: overrides.password ?? "correct horse battery",
      display_name: overrides.display_name ?? `User ${userCounter}`,
    });
    if (reply.status !== 201) throw new Error(`signup failed: ${reply.status} ${reply.text}`);
    return sessionFrom(reply, email);
  }

  async login(email: string, password: string): Promise<BrowserSession> {
    const reply = await this.post("/api/auth/login", { email, password });
    if (reply.status !== 200) throw new Error(`login failed: ${reply.status} ${reply.text}`);
    return sessionFrom(reply, email);
  }

  /** A personal access token for a signed-in user. */
  async pat(session: BrowserSession, name = "test token"): Promise<string> {
    const reply = await this.post("/api/v1/personal-access-tokens", { name }, { session });
    if (reply.status !== 201) throw new Error(`PAT creation failed: ${reply.status} ${reply.text}`);
    return reply.body.token as string;
  }

  /** A new user with a token and an organization (with its default project). */
  async userWithOrg(orgName = "Acme") {
    const session = await this.signup();
    const token = await this.pat(session);
    const reply = await this.post("/api/v1/orgs", { name: orgName }, { token });
    if (reply.status !== 201) throw new Error(`org creation failed: ${reply.status} ${reply.text}`);
    return { session, token, org: reply.body.org, project: reply.body.project, userId: session.userId };
  }

  /**
   * A new user who joined `orgId` with `role`: invited by `manager` (a token or session of an owner or
   * admin), accepted, and for `owner` promoted afterwards (then `manager` must be an owner).
   */
  async orgMember(
    manager: { token?: string; session?: BrowserSession },
    orgId: string,
    role: "owner" | "admin" | "member" = "member",
    profile: { display_name?: string; email?: string } = {},
  ) {
    const session = await this.signup(profile);
    const token = await this.pat(session);
    const invited = await this.post(`/api/v1/orgs/${orgId}/invitations`, { email: session.email, role: role === "owner" ? "admin" : role }, manager);
    if (invited.status !== 201) throw new Error(`invitation failed: ${invited.status} ${invited.text}`);
    const accepted = await this.post(`/api/v1/invitations/${invited.body.id}/accept`, undefined, { token });
    if (accepted.status !== 200) throw new Error(`accepting failed: ${accepted.status} ${accepted.text}`);
    if (role === "owner") {
      const promoted = await this.patch(`/api/v1/orgs/${orgId}/members/${session.userId}`, { role: "owner" }, manager);
      if (promoted.status !== 200) throw new Error(`promotion failed: ${promoted.status} ${promoted.text}`);
    }
    return { session, token, userId: session.userId };
  }

  /** Mints an organization API key through a browser session of an org manager. */
  async orgKey(session: BrowserSession, orgId: string, orgRole: "admin" | "member" = "member", name = `key ${++userCounter}`) {
    const reply = await this.post(`/api/v1/orgs/${orgId}/api-keys`, { name, org_role: orgRole }, { session });
    if (reply.status !== 201) throw new Error(`org key creation failed: ${reply.status} ${reply.text}`);
    return { token: reply.body.token as string, key: reply.body.api_key };
  }
}

function sessionFrom(reply: Reply, email: string): BrowserSession {
  const cookies = reply.headers.getSetCookie().map((c) => c.split(";")[0]!);
  const csrf = cookies.find((c) => c.startsWith("svc_csrf=") || c.startsWith("__Host-svc_csrf="))?.split("=")[1] ?? "";
  return { cookie: cookies.join("; "), csrf, userId: reply.body.user.id, email };
}
