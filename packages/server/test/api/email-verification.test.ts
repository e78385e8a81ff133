import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, TEST_ORIGIN, type TestServer } from "../support/server.js";

interface Captured {
  from: string;
  to: string[];
  raw: string;
}

// A real SMTP server on loopback: svc's nodemailer transport speaks the real protocol to it.
let smtp: SMTPServer;
let server: TestServer;
const inbox: Captured[] = [];

beforeAll(async () => {
  smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      let raw = "";
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => (raw += chunk));
      stream.on("end", () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        inbox.push({ from, to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  server = await startTestServer({ SVC_SMTP_URL: `smtp://127.0.0.1:${port}`, SVC_MAIL_FROM: "svc test <noreply@svc.test>" });
});
afterAll(async () => {
  await server?.close();
  await new Promise<void>((resolve) => (smtp ? smtp.close(() => resolve()) : resolve()));
});

/** The message body with quoted-printable soft breaks and escapes undone. */
function decoded(raw: string): string {
  return raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function verificationLink(message: Captured): string {
  const match = /https?:\/\/\S+\/api\/auth\/verify-email\?token=[0-9a-f]{64}/.exec(decoded(message.raw));
  if (!match) throw new Error(`no verification link in:\n${message.raw}`);
  return match[0];
}

describe("email verification over SMTP", () => {
  it("mails a link on sign-up, refuses sign-in until it is followed, then signs in", async () => {
    const email = "verify-me@example.com";
    const signup = await server.api.post("/api/auth/signup", { email, password: "long enough", display_name: "Vera" });
    expect(signup.status).toBe(201);
    expect(signup.body).toEqual({ user: expect.objectContaining({ email }), email_verification_required: true });
    expect(signup.headers.getSetCookie()).toEqual([]);

    const message = inbox.find((m) => m.to.includes(email));
    expect(message).toBeDefined();
    expect(message!.from).toBe("noreply@svc.test");
    expect(message!.raw).toMatch(/^Subject: Verify your email address$/m);
    expect(message!.raw).toMatch(/^To: Vera <verify-me@example\.com>$/m);
    const link = verificationLink(message!);
    expect(link.startsWith(`${TEST_ORIGIN}/api/auth/verify-email?token=`)).toBe(true);

    const early = await server.api.post("/api/auth/login", { email, password: "long enough" });
    expect(early.status).toBe(403);
    expect(early.body.code).toBe("forbidden");

    const path = link.slice(TEST_ORIGIN.length);
    const verified = await server.api.get(path);
    expect(verified.status).toBe(200);
    expect(verified.headers.get("content-type")).toMatch(/^text\/html/);
    expect(verified.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(verified.text).toContain("Email verified. You can sign in now.");

    const session = await server.api.login(email, "long enough");
    expect((await server.api.get("/api/v1/me", { session })).status).toBe(200);

    const reused = await server.api.get(path);
    expect(reused.status).toBe(400);
    expect(reused.headers.get("content-type")).toMatch(/^text\/html/);
    expect(reused.text).toContain("invalid, was already used or has expired");
  });

  it("answers a 400 page for missing, malformed and unknown tokens", async () => {
    for (const path of ["/api/auth/verify-email", "/api/auth/verify-email?token=", "/api/auth/verify-email?token=%3Cscript%3E", `/api/auth/verify-email?token=${"a".repeat(64)}`, "/api/auth/verify-email?token=a&token=b"]) {
      const reply = await server.api.get(path);
      expect(reply.status, path).toBe(400);
      expect(reply.headers.get("content-type")).toMatch(/^text\/html/);
      expect(reply.text).not.toContain("<script>");
    }
  });

  it("still refuses a wrong password before verification with 401, not 403", async () => {
    const email = "unverified@example.com";
    await server.api.post("/api/auth/signup", { email, password: "long enough", display_name: "U" });
    const wrong = await server.api.post("/api/auth/login", { email, password: "not the password" });
    expect(wrong.status).toBe(401);
  });

  it("sends a fresh link when an unverified user signs in with the right password, and either link works", async () => {
    const email = "lost-mail@example.com";
    await server.api.post("/api/auth/signup", { email, password: "long enough", display_name: "Lou" });
    const before = inbox.filter((m) => m.to.includes(email)).length;
    const refused = await server.api.post("/api/auth/login", { email, password: "long enough" });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toContain("new verification link");
    const mails = inbox.filter((m) => m.to.includes(email));
    expect(mails).toHaveLength(before + 1);
    const [first, second] = [verificationLink(mails[0]!), verificationLink(mails.at(-1)!)];
    expect(second).not.toBe(first);
    expect((await server.api.get(second.slice(TEST_ORIGIN.length))).status).toBe(200);
    expect((await server.api.login(email, "long enough")).userId).toMatch(/^usr_/);
  });
});
