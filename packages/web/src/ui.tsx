import { cloneElement, isValidElement, useCallback, useEffect, useState, type AnchorHTMLAttributes, type ReactNode } from "react";
import { useMutation, type QueryKey } from "@tanstack/react-query";
import { ApiError } from "./api/client";
import { useInvalidate } from "./query";
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

/**
 * Runs a change (a TanStack Query mutation) with a busy flag, keeps its error for display, and afterwards
 * invalidates the cached queries it changed (`invalidates`), so every list showing them reads again.
 */
export function useAction(options: { invalidates?: QueryKey[] } = {}): { busy: boolean; error: unknown; run: (action: () => Promise<unknown>) => Promise<boolean> } {
  const invalidate = useInvalidate();
  const stale = options.invalidates ?? [];
  const mutation = useMutation({
    mutationFn: (action: () => Promise<unknown>) => action(),
    // Awaited: the action resolves once what it changed has been read again.
    onSuccess: () => invalidate(...stale),
  });
  const { mutateAsync } = mutation;
  const run = useCallback(async (action: () => Promise<unknown>) => {
    try {
      await mutateAsync(action);
      return true;
    } catch {
      // Kept in mutation.error, shown where the action was.
      return false;
    }
  }, [mutateAsync]);
  return { busy: mutation.isPending, error: mutation.error ?? undefined, run };
}

export function Field(props: { label: string; id: string; children: ReactNode; hint?: string; error?: string | undefined }) {
  const hintID = `${props.id}-hint`;
  const errorID = `${props.id}-error`;
  // A hint and an error are read out with their control (aria-describedby), not only seen below it.
  const described = [props.hint ? hintID : "", props.error ? errorID : ""].filter((id) => id !== "").join(" ");
  const control =
    described && isValidElement<{ "aria-describedby"?: string; "aria-invalid"?: boolean }>(props.children)
      ? cloneElement(props.children, { "aria-describedby": described, ...(props.error ? { "aria-invalid": true } : {}) })
      : props.children;
  return (
    <div className="field">
      <label htmlFor={props.id}>{props.label}</label>
      {control}
      {props.hint ? (
        <p className="muted small" id={hintID}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p className="error small" id={errorID}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** What the error envelope's issues say about one field (its JSON pointer, or anything under it). */
export function issueAt(error: unknown, pointer: string): string | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const messages = error.issues.filter((i) => i.path === pointer || i.path.startsWith(`${pointer}/`)).map((i) => i.message);
  return messages.length > 0 ? messages.join("; ") : undefined;
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

const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const STEPS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ["second", 60],
  ["minute", 60],
  ["hour", 24],
  ["day", 30],
  ["month", 12],
  ["year", Number.POSITIVE_INFINITY],
];

/** "3 minutes ago" from a timestamp and now. */
export function relative(timestamp: string, now = Date.now()): string {
  let value = (Date.parse(timestamp) - now) / 1000;
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return RELATIVE.format(Math.round(value), unit);
    value /= size;
  }
  return when(timestamp);
}

/** A time shown relative to now, with the exact time on hover and for assistive technology (title, dateTime). */
export function RelativeTime({ at }: { at: string | undefined }) {
  const [, tick] = useState(0);
  useEffect(() => {
    // Kept current while shown: once a minute is enough for "n minutes ago".
    const timer = setInterval(() => tick((n) => n + 1), 30_000);
    return () => clearInterval(timer);
  }, []);
  if (!at) return null;
  return (
    <time dateTime={at} title={when(at)}>
      {relative(at)}
    </time>
  );
}

/** A page's empty state: what is missing and the next step. */
export function Empty(props: { title: string; children?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-line bg-panel p-6 text-center">
      <p className="font-semibold">{props.title}</p>
      {props.children ? <div className="text-muted">{props.children}</div> : null}
    </div>
  );
}

/**
 * Why a button is disabled, said to everyone: `title` on hover, and a visible line the button points at
 * with aria-describedby. Spread `whyDisabled(id, reason)` on the button and render `<Why id reason />`.
 */
export function whyDisabled(id: string, reason: string | undefined): { title?: string; "aria-describedby"?: string } {
  return reason ? { title: reason, "aria-describedby": id } : {};
}

export function Why({ id, reason }: { id: string; reason: string | undefined }) {
  if (!reason) return null;
  return (
    <p className="small muted wide-row" id={id}>
      {reason}
    </p>
  );
}
