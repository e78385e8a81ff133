import { useId, useRef, useState, type FormEvent, type ReactNode } from "react";
import { AlertDialog } from "radix-ui";
import { api, call, type Schemas } from "./api/client";
import { useQuery } from "@tanstack/react-query";
import { keys } from "./query";
import { ErrorNotice, Field, useAction } from "./ui";

/*
 * Building blocks of the settings pages: a table, a value shown once, the organization's projects, and
 * grant lists with a Revoke button per project.
 */

export function Table(props: { label: string; head: string[]; rows: ReactNode[][]; empty: string }) {
  if (props.rows.length === 0) return <p className="muted">{props.empty}</p>;
  return (
    <div className="table-wrap">
      <table aria-label={props.label}>
        <thead>
          <tr>
            {props.head.map((h, i) => (
              <th key={i} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row, i) => (
            <tr key={i}>
              {row.map((cell, j) => (
                // At phone width the header row is hidden and each cell shows its column's name (styles.css).
                <td key={j} data-label={props.head[j] || undefined}>
                  {cell}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * A value shown once (a token, a command) with a Copy button. Browsers offer the clipboard only on secure
 * pages (https, localhost): elsewhere the value is selected instead, for Ctrl+C.
 */
export function Shown({ label, value, copyLabel }: { label: string; value: string | undefined; copyLabel?: string }) {
  // Which value the note is about: a new value (another token) starts without one.
  const [copied, setCopied] = useState<{ value: string; note: string }>();
  const shown = useRef<HTMLPreElement>(null);
  const labelID = useId();
  if (!value) return null;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied({ value, note: "Copied." });
    } catch {
      const range = document.createRange();
      range.selectNodeContents(shown.current!);
      getSelection()?.removeAllRanges();
      getSelection()?.addRange(range);
      setCopied({ value, note: "Selected: press Ctrl+C (⌘C) to copy." });
    }
  };
  return (
    <div className="card shown">
      <p id={labelID}>{label}</p>
      <pre className="copy" ref={shown} aria-labelledby={labelID} tabIndex={0}>
        {value}
      </pre>
      <button type="button" className="secondary" onClick={() => void copy()} aria-label={copyLabel}>
        Copy
      </button>{" "}
      <span role="status" className="small muted">
        {copied?.value === value ? copied.note : null}
      </span>
    </div>
  );
}

/** A form field's trimmed text. */
export function text(form: FormData, name: string): string {
  return String(form.get(name) ?? "").trim();
}

/** A form field as a positive integer, or undefined when left empty (the API's default applies). */
export function optionalInt(form: FormData, name: string): number | undefined {
  const value = text(form, name);
  return value === "" ? undefined : Number(value);
}

/** The organization's projects (first 100, as every picker in the console). */
export function useProjects(org: string | undefined) {
  return useQuery({
    queryKey: keys.projects(org ?? ""),
    enabled: org !== undefined,
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: org! }, query: { limit: 100 } } }))).data,
  });
}

/** The organization's budgets (first 100): the Budgets page, and the agent pages naming the one that paused an agent. */
export function useBudgets(org: string, options: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: keys.org(org, "budgets"),
    enabled: options.enabled ?? true,
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/budgets", { params: { path: { orgID: org }, query: { limit: 100 } } }))).data,
  });
}

export function ProjectSelect(props: { id: string; label: string; projects: Schemas["Project"][] | undefined; name?: string; value?: string; onChange?: (projectID: string) => void }) {
  return (
    <Field label={props.label} id={props.id}>
      <select id={props.id} name={props.name ?? "project"} value={props.value} onChange={props.onChange ? (event) => props.onChange!(event.target.value) : undefined}>
        {props.projects?.map((p) => (
          <option key={p.id} value={p.id}>
            {p.name}
          </option>
        ))}
      </select>
    </Field>
  );
}

export interface GrantRow {
  grantID: string;
  projectID: string;
  projectName: string;
}

/** "Granted to: A [Revoke] B [Revoke]": what a thing is granted to, each revocable on its own. */
export function GrantedTo(props: { what: string; grants: GrantRow[] | undefined; revoke: (grant: GrantRow) => Promise<unknown>; revoked: () => void }) {
  const action = useAction();
  if (!props.grants) return null;
  if (props.grants.length === 0) return <p className="small muted">Granted to no project.</p>;
  return (
    <div className="granted">
      <ul className="chips" aria-label={`Projects ${props.what} is granted to`}>
        {props.grants.map((g) => (
          <li key={g.grantID}>
            <span>{g.projectName}</span>
            <button
              type="button"
              className="secondary small-button"
              disabled={action.busy}
              aria-label={`Revoke ${props.what} from ${g.projectName}`}
              onClick={() => void action.run(async () => {
                await props.revoke(g);
                props.revoked();
              })}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      <ErrorNotice error={action.error} />
    </div>
  );
}

/** "Grant <one of items> to <project>": the access grants of machines, secrets and pools. */
export function GrantForm(props: {
  what: string;
  items: Array<{ id: string; name: string }>;
  projects: Schemas["Project"][] | undefined;
  grant: (itemID: string, projectID: string) => Promise<unknown>;
  granted: () => void;
}) {
  const action = useAction();
  const [done, setDone] = useState<string>();
  if (props.items.length === 0) return null;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const item = props.items.find((i) => i.id === form.get("item"));
    const project = props.projects?.find((p) => p.id === form.get("project"));
    if (!item || !project) return;
    setDone(undefined);
    void action.run(async () => {
      await props.grant(item.id, project.id);
      setDone(`${item.name} is granted to ${project.name}.`);
      props.granted();
    });
  };
  const id = props.what.toLowerCase().replace(/\s+/g, "-");
  return (
    <>
      <h2>Grant a {props.what.toLowerCase()} to a project</h2>
      <form onSubmit={submit} className="inline-form">
        <Field label={props.what} id={`grant-${id}`}>
          <select id={`grant-${id}`} name="item">
            {props.items.map((i) => (
              <option key={i.id} value={i.id}>
                {i.name}
              </option>
            ))}
          </select>
        </Field>
        <ProjectSelect id={`grant-${id}-project`} label="To project" projects={props.projects} />
        <button className="secondary" disabled={action.busy}>
          Grant
        </button>
      </form>
      <ErrorNotice error={action.error} />
      {done ? <p role="status">{done}</p> : null}
    </>
  );
}

/**
 * A delete button that asks first, in a dialog naming what goes (deleting is not undone). The dialog stays
 * open with the server's refusal when the delete fails, so the error shows where it happened.
 */
export function DeleteButton(props: { label: string; name: string; remove: () => Promise<unknown>; removed: () => void; text?: string; consequence?: string }) {
  const action = useAction();
  const [open, setOpen] = useState(false);
  const verb = props.text ?? "Delete";
  return (
    <AlertDialog.Root open={open} onOpenChange={setOpen}>
      <AlertDialog.Trigger asChild>
        <button type="button" className="secondary danger small-button" aria-label={`${verb} ${props.name}`}>
          {verb}
        </button>
      </AlertDialog.Trigger>
      <AlertDialog.Portal>
        <AlertDialog.Overlay className="fixed inset-0 z-40 bg-black/50" />
        <AlertDialog.Content className="fixed left-1/2 top-1/2 z-50 w-[min(28rem,calc(100vw-2rem))] -translate-x-1/2 -translate-y-1/2 rounded-xl border border-line bg-bg p-5 shadow-xl">
          <AlertDialog.Title className="text-lg font-semibold">{props.label}?</AlertDialog.Title>
          <AlertDialog.Description className="text-muted">
            {props.consequence ?? `This removes ${props.name} for good; it cannot be undone.`}
          </AlertDialog.Description>
          <ErrorNotice error={action.error} />
          <div className="mt-4 flex flex-wrap justify-end gap-2">
            {/* The safe choice has the focus first. */}
            <AlertDialog.Cancel asChild>
              <button type="button" className="secondary small-button">
                Keep
              </button>
            </AlertDialog.Cancel>
            <button
              type="button"
              className="danger-fill small-button"
              disabled={action.busy}
              onClick={() => void action.run(async () => {
                await props.remove();
                setOpen(false);
                props.removed();
              })}
            >
              Yes, {verb.toLowerCase()}
            </button>
          </div>
        </AlertDialog.Content>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}

/**
 * Grants that are listed per project (machine grants, pool grants), gathered from every project and keyed
 * by what they grant.
 */
export async function grantsAcrossProjects<T>(
  projects: Schemas["Project"][],
  list: (projectID: string) => Promise<T[]>,
  read: (item: T) => { grantID: string; grants: string },
): Promise<Map<string, GrantRow[]>> {
  const byThing = new Map<string, GrantRow[]>();
  const lists = await Promise.all(projects.map(async (project) => ({ project, items: await list(project.id) })));
  for (const { project, items } of lists) {
    for (const item of items) {
      const { grantID, grants } = read(item);
      byThing.set(grants, [...(byThing.get(grants) ?? []), { grantID, projectID: project.id, projectName: project.name }]);
    }
  }
  return byThing;
}
