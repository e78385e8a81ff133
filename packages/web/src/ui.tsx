import { cloneElement, isValidElement, useCallback, useEffect, useState, type AnchorHTMLAttributes, type ReactNode } from "react";
import { ApiError } from "./api/client";
import { navigate } from "./router";

/** An in-app link: a real anchor (keyboard, middle-click) that navigates without a reload. */
export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const { to, ...rest } = props;
  return (
    <a
      {...rest}
      href={to}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(to);
      }}
    />
  );
}

export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <p role="alert" className="error">
      {message}
    </p>
  );
}

/** Loads on mount and when `deps` change; `reload` loads again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: unknown; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: unknown }>({});
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then(
      (data) => live && setState({ data }),
      (error: unknown) => live && setState({ error }),
    );
    return () => {
      live = false;
    };
    // `load` is a new closure on every render; what it reads is in `deps`.
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return { data: state.data, error: state.error, reload };
}

/** Runs an action with a busy flag and keeps its error for display. */
export function useAction(): { busy: boolean; error: unknown; run: (action: () => Promise<unknown>) => Promise<boolean> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async (action: () => Promise<unknown>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (err) {
      setError(err);
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run };
}

export function Field(props: { label: string; id: string; children: ReactNode; hint?: string }) {
  const hintID = `${props.id}-hint`;
  // A hint is read out with its control (aria-describedby), not only seen below it.
  const control = props.hint && isValidElement<{ "aria-describedby"?: string }>(props.children) ? cloneElement(props.children, { "aria-describedby": hintID }) : props.children;
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      {control}
      {props.hint ? (
        <p className="muted small" id={hintID}>
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}

export function isApiError(error: unknown, status?: number): error is ApiError {
  return error instanceof ApiError && (status === undefined || error.status === status);
}

export function when(timestamp: string | undefined): string {
  return timestamp ? new Date(timestamp).toLocaleString() : "";
}

export function Page(props: { title: string; children: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    document.title = `${props.title} · svc`;
  }, [props.title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <div className="page-head">
        <h1 id="page-title">{props.title}</h1>
        {props.actions}
      </div>
      {props.children}
    </section>
  );
}
