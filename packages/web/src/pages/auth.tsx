import { useState, type FormEvent, type ReactNode } from "react";
import { api, call } from "../api/client";
import { navigate } from "../router";
import { useSession } from "../session";
import { ErrorNotice, Field, Link, useAction } from "../ui";

/** Where to go after signing in: the `next` the sign-in link carried, when it is a path of this console. */
function nextPath(): string {
  const next = new URLSearchParams(location.search).get("next") ?? "/";
  return next.startsWith("/") && !next.startsWith("//") ? next : "/";
}

export function SignIn() {
  const { refresh } = useSession();
  const action = useAction();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void action.run(async () => {
      await call(api.POST("/api/auth/login", { body: { email: String(form.get("email")), password: String(form.get("password")) } }));
      await refresh();
      navigate(nextPath(), true);
    });
  };
  return (
    <AuthCard title="Sign in to svc">
      <form onSubmit={submit}>
        <Field label="Email" id="email">
          <input id="email" name="email" type="email" autoComplete="username" required />
        </Field>
        <Field label="Password" id="password">
          <input id="password" name="password" type="password" autoComplete="current-password" required />
        </Field>
        <ErrorNotice error={action.error} />
        <button className="primary wide" disabled={action.busy}>
          Sign in
        </button>
      </form>
      <p className="muted">
        New here? <Link to={`/signup${location.search}`}>Create an account</Link>
      </p>
    </AuthCard>
  );
}

export function SignUp() {
  const { refresh } = useSession();
  const action = useAction();
  const [verify, setVerify] = useState(false);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void action.run(async () => {
      const body = { email: String(form.get("email")), password: String(form.get("password")), display_name: String(form.get("display_name")) };
      const result = await call(api.POST("/api/auth/signup", { body }));
      if (result.email_verification_required) return setVerify(true);
      await refresh();
      navigate(nextPath(), true);
    });
  };
  if (verify) {
    return (
      <AuthCard title="Check your email">
        <p role="status">We sent you a link to confirm your address. Open it, then sign in.</p>
        <Link to="/signin">Sign in</Link>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Create your svc account">
      <form onSubmit={submit}>
        <Field label="Name" id="display_name">
          <input id="display_name" name="display_name" autoComplete="name" required maxLength={64} />
        </Field>
        <Field label="Email" id="email">
          <input id="email" name="email" type="email" autoComplete="email" required />
        </Field>
        <Field label="Password" id="password" hint="At least 8 characters.">
          <input id="password" name="password" type="password" autoComplete="new-password" required minLength={8} />
        </Field>
        <ErrorNotice error={action.error} />
        <button className="primary wide" disabled={action.busy}>
          Create account
        </button>
      </form>
      <p className="muted">
        Have an account? <Link to={`/signin${location.search}`}>Sign in</Link>
      </p>
    </AuthCard>
  );
}

export function AuthCard(props: { title: string; children: ReactNode }) {
  return (
    <main className="auth">
      <div className="card">
        <h1>{props.title}</h1>
        {props.children}
      </div>
    </main>
  );
}
