import { useEffect, useState, type FormEvent } from "react";
import { api, call, isSignedOut, type Schemas } from "../api/client";
import { useSession } from "../session";
import { ErrorNotice, Field, isApiError, useAction, when } from "../ui";
import { AuthCard } from "./auth";

type Step = { kind: "code" } | { kind: "signin" } | { kind: "confirm"; pending: Schemas["PendingDeviceLogin"] } | { kind: "done"; approved: boolean };

/** RFC 8628 user codes: ten hexadecimal characters, shown as XXXXX-XXXXX. */
function normalize(code: string): string {
  return code.toUpperCase().replace(/[\s-]/g, "");
}

/**
 * The device approval page (/device?user_code=…): the user signs in first when needed, checks the code
 * and the client's name, then approves or denies. A refusal for the wrong origin says which address to
 * open rather than "reload" (the API module explains csrf_check_failed).
 */
export function DevicePage() {
  const { refresh } = useSession();
  const [code, setCode] = useState(() => new URLSearchParams(location.search).get("user_code") ?? "");
  const [step, setStep] = useState<Step>({ kind: "code" });
  const action = useAction();

  const lookup = (raw: string) =>
    action.run(async () => {
      const userCode = normalize(raw);
      if (!/^[0-9A-F]{10}$/.test(userCode)) throw new Error("Enter the 10-character code shown on your device, like ABCDE-12345.");
      history.replaceState(null, "", `/device?user_code=${userCode.slice(0, 5)}-${userCode.slice(5)}`);
      try {
        const pending = await call(api.GET("/api/auth/device/pending", { params: { query: { user_code: userCode } } }));
        setStep({ kind: "confirm", pending });
      } catch (err) {
        if (isSignedOut(err)) return setStep({ kind: "signin" });
        if (isApiError(err, 404)) throw new Error("This code is not valid, was already used or has expired. Check the code on your device.");
        throw err;
      }
    });

  useEffect(() => {
    if (code) void lookup(code);
    // Only the code the page was opened with is looked up by itself, once.
  }, []);

  const submitCode = (event: FormEvent) => {
    event.preventDefault();
    void lookup(code);
  };
  const signIn = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void action.run(async () => {
      await call(api.POST("/api/auth/login", { body: { email: String(form.get("email")), password: String(form.get("password")) } }));
      await refresh();
    }).then((ok) => ok && lookup(code));
  };
  const decide = (approve: boolean, userCode: string) =>
    void action.run(async () => {
      await call(api.POST(approve ? "/api/auth/device/approve" : "/api/auth/device/deny", { body: { user_code: userCode } }));
      setStep({ kind: "done", approved: approve });
    });

  return (
    <AuthCard title="Device login">
      {step.kind === "code" ? (
        <form onSubmit={submitCode}>
          <Field label="Enter the code shown on your device" id="user-code">
            <input id="user-code" value={code} onChange={(event) => setCode(event.target.value)} autoComplete="off" spellCheck={false} maxLength={64} placeholder="XXXXX-XXXXX" required />
          </Field>
          <ErrorNotice error={action.error} />
          <button className="primary wide" disabled={action.busy}>
            Continue
          </button>
        </form>
      ) : null}
      {step.kind === "signin" ? (
        <form onSubmit={signIn}>
          <p role="status">Sign in to approve this device.</p>
          <Field label="Email" id="email">
            <input id="email" name="email" type="email" autoComplete="username" required autoFocus />
          </Field>
          <Field label="Password" id="password">
            <input id="password" name="password" type="password" autoComplete="current-password" required />
          </Field>
          <ErrorNotice error={action.error} />
          <button className="primary wide" disabled={action.busy}>
            Sign in
          </button>
        </form>
      ) : null}
      {step.kind === "confirm" ? (
        <div>
          <p>
            <strong>{step.pending.client_name}</strong> is asking for access to your account.
          </p>
          <dl className="facts">
            <dt>Code</dt>
            <dd className="code">{step.pending.user_code}</dd>
            <dt>Token name</dt>
            <dd>{step.pending.token_name}</dd>
            <dt>Expires</dt>
            <dd>{when(step.pending.expires_at)}</dd>
          </dl>
          <p className="muted">Approve only if you started this login and the code matches the one on your device. The device gets a personal access token that acts as you.</p>
          <ErrorNotice error={action.error} />
          <div className="actions">
            <button type="button" className="primary" disabled={action.busy} onClick={() => decide(true, step.pending.user_code)}>
              Approve
            </button>
            <button type="button" className="secondary" disabled={action.busy} onClick={() => decide(false, step.pending.user_code)}>
              Deny
            </button>
          </div>
        </div>
      ) : null}
      {step.kind === "done" ? (
        <p role="status">{step.approved ? "Device approved. You can close this page and go back to your device." : "Login denied. The device will not get access."}</p>
      ) : null}
    </AuthCard>
  );
}
