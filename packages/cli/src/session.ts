import { startDeviceLogin, unwrap, waitForDeviceLogin, type SvcClient } from "@svc/sdk";

/** A browser session started with a password: its cookies, and the CSRF value its writes must echo. */
export interface PasswordSession {
  cookie: string;
  csrf: string;
}

/** What signing up answered: the user, and a session unless the address must be verified first. */
export interface SignUpOutcome {
  user: { email: string };
  session: PasswordSession | undefined;
}

export async function signUp(client: SvcClient, body: { email: string; password: string; display_name: string }): Promise<SignUpOutcome> {
  const outcome = await client.POST("/api/auth/signup", { body });
  const answer = await unwrap(Promise.resolve(outcome));
  return { user: answer.user, session: answer.csrf_token ? { cookie: cookiesOf(outcome.response), csrf: answer.csrf_token } : undefined };
}

export async function signIn(client: SvcClient, body: { email: string; password: string }): Promise<PasswordSession> {
  const outcome = await client.POST("/api/auth/login", { body });
  const answer = await unwrap(Promise.resolve(outcome));
  if (!answer.csrf_token) throw new Error("svc started no session for this sign-in");
  return { cookie: cookiesOf(outcome.response), csrf: answer.csrf_token };
}

/**
 * A personal access token for the session's user, by the device login the spec names as the way a tool
 * gets one (spec, Authentication 7): the CLI starts the flow and approves it with the session the person
 * just opened with their password, as they would on the console's approval page. The session then ends.
 */
export async function tokenThroughSession(client: SvcClient, session: PasswordSession, names: { client_name: string; token_name: string }): Promise<string> {
  const code = await startDeviceLogin(client, names);
  // svc accepts a session's writes only from its public URL (CSRF check), which the verification address is on.
  const headers = { cookie: session.cookie, "x-svc-csrf": session.csrf, origin: new URL(code.verification_uri).origin };
  try {
    await unwrap(client.POST("/api/auth/device/approve", { body: { user_code: code.user_code }, headers }));
    return await waitForDeviceLogin(client, code);
  } finally {
    // Best effort: an unended session expires on its own.
    await client.POST("/api/auth/logout", { headers }).catch(() => undefined);
  }
}

/** The `name=value` pairs of the response's cookies, as a Cookie header sends them back. */
function cookiesOf(response: Response): string {
  const pairs = response.headers.getSetCookie().map((line) => line.split(";")[0]!.trim());
  if (pairs.length === 0) throw new Error("svc answered without the session's cookies");
  return pairs.join("; ");
}
