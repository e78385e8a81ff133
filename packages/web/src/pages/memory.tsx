import { useState, type FormEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { api, call, type Schemas } from "../api/client";
import { navigate, useLocation } from "../router";
import { Empty, ErrorNotice, Field, isApiError, Link, Page, RelativeTime, useAction } from "../ui";
import { DeleteButton, Table, text } from "../widgets";

/*
 * Memory stores (docs/memory.md): the project's stores of text files that outlive agents. Create, edit
 * (description, writable) and delete stores; browse a store's files by path prefix or search them (`q`);
 * read a file, edit it guarded by the digest it was read at (a 409 says someone else changed it), and read
 * its versions with who wrote each. What is open is in the address (`?store=…&file=…`), so Back works and
 * a file can be linked.
 */

type Store = Schemas["MemoryStore"];
type Memory = Schemas["Memory"];
type Version = Schemas["MemoryVersion"];

const PAGE = 50;

/** The project's memory stores and everything read under them: a change invalidates the whole family at once. */
const storesKey = (org: string, project: string, ...under: unknown[]) => keys.project(org, project, "memory-stores", ...under);

/** Sets the page's address parameters (store, file, prefix, q), dropping empty ones. */
function go(base: string, params: Record<string, string | undefined>): void {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value) query.set(key, value);
  const search = query.toString();
  navigate(search ? `${base}?${search}` : base);
}

export function Memory({ org, project }: { org: string; project: string }) {
  const { query } = useLocation();
  const storeId = query.get("store") ?? undefined;
  const fileId = query.get("file") ?? undefined;
  const base = `/orgs/${org}/projects/${project}/memory`;
  const path = { orgID: org, projectID: project };
  const stores = useQuery({
    queryKey: storesKey(org, project),
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores", { params: { path, query: { limit: 100, sort: "name" } } }))).data,
  });
  const store = stores.data?.find((s) => s.id === storeId);
  return (
    <Page title="Memory">
      <p className="muted">
        Memory stores hold text files that outlive any one agent. An agent reaches a store its config attaches (<code>memory:</code>) as{" "}
        <code>/memory/&lt;store&gt;/&lt;path&gt;</code>; every change is kept as a version.
      </p>
      <ErrorNotice error={stores.error} />
      {stores.data && stores.data.length === 0 ? (
        <Empty title="No memory stores yet.">Create one below, then attach it to an agent config with a memory section.</Empty>
      ) : (
        <Table
          label="Memory stores"
          head={["Name", "Description", "Writes", "Files", "Size", "Updated", "Change"]}
          empty="No memory stores yet."
          rows={(stores.data ?? []).map((s) => [
            <Link to={`${base}?store=${s.id}`} aria-current={s.id === storeId ? "page" : undefined}>
              {s.name}
            </Link>,
            s.description || <span className="muted">none</span>,
            s.writable ? "writable" : "read-only",
            String(s.memory_count),
            bytes(s.size_bytes),
            <RelativeTime at={s.updated_at} />,
            <StoreEdit org={org} project={project} store={s} onDeleted={() => (s.id === storeId ? go(base, {}) : undefined)} />,
          ])}
        />
      )}
      <CreateStore org={org} project={project} />
      {store ? <StoreFiles key={store.id} org={org} project={project} store={store} fileId={fileId} base={base} /> : null}
      {storeId && stores.data && !store ? <p className="error">No memory store {storeId} in this project (it may have been deleted).</p> : null}
    </Page>
  );
}

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

function CreateStore({ org, project }: { org: string; project: string }) {
  const invalidate = useInvalidate();
  const action = useAction();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    void action.run(async () => {
      await call(
        api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores", {
          params: { path: { orgID: org, projectID: project } },
          body: { name: text(form, "name"), description: text(form, "description"), writable: form.get("writable") === "on" },
        }),
      );
      formEl.reset();
      await invalidate(storesKey(org, project));
    });
  };
  return (
    <>
      <h2>Create a memory store</h2>
      <form onSubmit={submit} className="inline-form" aria-label="Create a memory store">
        <Field label="Store name" id="store-name" hint="Letters, digits, '.', '_' and '-'; agents see it as /memory/<name>.">
          <input id="store-name" name="name" required maxLength={64} pattern="[A-Za-z0-9_\-][A-Za-z0-9._\-]*" />
        </Field>
        <Field label="Description" id="store-description">
          <input id="store-description" name="description" maxLength={1024} />
        </Field>
        <label className="flex items-center gap-2">
          <input type="checkbox" name="writable" defaultChecked /> Writable
        </label>
        <button className="primary" disabled={action.busy}>
          Create store
        </button>
      </form>
      <ErrorNotice error={action.error} />
    </>
  );
}

function StoreEdit({ org, project, store, onDeleted }: { org: string; project: string; store: Store; onDeleted: () => void }) {
  const invalidate = useInvalidate();
  const action = useAction();
  const path = { orgID: org, projectID: project, memoryStoreID: store.id };
  const refresh = () => invalidate(storesKey(org, project));
  const save = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void action.run(async () => {
      await call(
        api.PATCH("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}", {
          params: { path },
          body: { description: text(form, "description"), writable: form.get("writable") === "on" },
        }),
      );
      await refresh();
    });
  };
  const files = store.memory_count === 1 ? "its 1 file" : `its ${store.memory_count} files`;
  return (
    <div className="stack">
      <form onSubmit={save} className="inline-form" aria-label={`Edit memory store ${store.name}`}>
        <Field label={`Description of ${store.name}`} id={`${store.id}-description`}>
          <input id={`${store.id}-description`} name="description" maxLength={1024} defaultValue={store.description} />
        </Field>
        <label className="flex items-center gap-2">
          <input type="checkbox" name="writable" defaultChecked={store.writable} aria-label={`${store.name} is writable`} /> Writable
        </label>
        <button className="secondary small-button" disabled={action.busy} aria-label={`Save ${store.name}`}>
          Save
        </button>
      </form>
      <DeleteButton
        label={`Delete memory store ${store.name}`}
        name={`memory store ${store.name}`}
        consequence={`This removes memory store ${store.name}, ${files} and every version of them, for good; it cannot be undone. svc refuses while an agent config in use attaches the store.`}
        remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}", { params: { path } }))}
        removed={() => {
          onDeleted();
          void refresh();
        }}
      />
      <ErrorNotice error={action.error} />
    </div>
  );
}

/** A store's files: filtered by path prefix or searched, paged, with the open file below. */
function StoreFiles({ org, project, store, fileId, base }: { org: string; project: string; store: Store; fileId: string | undefined; base: string }) {
  const { query } = useLocation();
  const prefix = query.get("prefix") ?? "";
  const q = query.get("q") ?? "";
  const [cursors, setCursors] = useState<string[]>([]);
  const path = { orgID: org, projectID: project, memoryStoreID: store.id };
  const cursor = cursors.at(-1);
  const list = useQuery({
    queryKey: storesKey(org, project, store.id, "files", prefix, q, cursor),
    queryFn: () =>
      call(
        api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories", {
          params: { path, query: { limit: PAGE, ...(prefix ? { path_prefix: prefix } : {}), ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) } },
        }),
      ),
  });
  const filter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setCursors([]);
    go(base, { store: store.id, prefix: text(form, "prefix"), q: text(form, "q") });
  };
  const next = list.data?.next_cursor;
  return (
    <section aria-labelledby="files-title">
      <h2 id="files-title">Files of {store.name}</h2>
      <form onSubmit={filter} className="inline-form" aria-label={`Find files of ${store.name}`}>
        <Field label="Path starts with" id="memory-prefix">
          <input id="memory-prefix" name="prefix" defaultValue={prefix} placeholder="notes/" />
        </Field>
        <Field label="Search text" id="memory-q" hint="Full-text search over paths and contents, best matches first.">
          <input id="memory-q" name="q" type="search" defaultValue={q} />
        </Field>
        <button className="secondary">Find</button>
      </form>
      <ErrorNotice error={list.error} />
      <Table
        label={`Files of ${store.name}`}
        head={["Path", "Size", "Version", "Updated"]}
        empty={prefix || q ? "No file matches." : "No files yet. Write one below, or let an agent write it."}
        rows={(list.data?.data ?? []).map((m) => [
          <Link to={`${base}?${new URLSearchParams({ store: store.id, ...(prefix ? { prefix } : {}), ...(q ? { q } : {}), file: m.id }).toString()}`} aria-current={m.id === fileId ? "page" : undefined}>
            {m.path}
          </Link>,
          bytes(m.size_bytes),
          String(m.version),
          <RelativeTime at={m.updated_at} />,
        ])}
      />
      <div className="actions">
        {cursors.length > 0 ? (
          <button type="button" className="secondary small-button" onClick={() => setCursors(cursors.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {next ? (
          <button type="button" className="secondary small-button" onClick={() => setCursors([...cursors, next])}>
            Next page
          </button>
        ) : null}
      </div>
      {store.writable ? <NewFile org={org} project={project} store={store} base={base} /> : <p className="muted">This store is read-only: make it writable above to write files.</p>}
      {fileId ? <MemoryFile key={fileId} org={org} project={project} store={store} memoryId={fileId} base={base} /> : null}
    </section>
  );
}

function NewFile({ org, project, store, base }: { org: string; project: string; store: Store; base: string }) {
  const invalidate = useInvalidate();
  const action = useAction();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    void action.run(async () => {
      const written = await call(
        api.PUT("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories", {
          params: { path: { orgID: org, projectID: project, memoryStoreID: store.id } },
          body: { path: text(form, "path"), content: String(form.get("content") ?? "") },
        }),
      );
      formEl.reset();
      await invalidate(storesKey(org, project));
      go(base, { store: store.id, file: written.id });
    });
  };
  return (
    <details className="card">
      <summary>Write a file</summary>
      <form onSubmit={submit} className="stack" aria-label={`Write a file in ${store.name}`}>
        <Field label="Path" id="new-memory-path" hint="Relative, such as notes/people.md; writing an existing path replaces it as a new version.">
          <input id="new-memory-path" name="path" required maxLength={512} />
        </Field>
        <Field label="Content" id="new-memory-content">
          <textarea id="new-memory-content" className="w-full font-mono" name="content" rows={6} />
        </Field>
        <button className="primary" disabled={action.busy}>
          Write file
        </button>
      </form>
      <ErrorNotice error={action.error} />
    </details>
  );
}

/** One file: its content, an editor guarded by its digest, its versions. */
function MemoryFile({ org, project, store, memoryId, base }: { org: string; project: string; store: Store; memoryId: string; base: string }) {
  const invalidate = useInvalidate();
  const path = { orgID: org, projectID: project, memoryStoreID: store.id, memoryID: memoryId };
  const file = useQuery({
    queryKey: storesKey(org, project, store.id, "file", memoryId),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}", { params: { path } })),
    // Agents write memory while the page is open elsewhere: opening a file always reads what it holds now.
    refetchOnMount: "always",
  });
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState("");
  const [readAt, setReadAt] = useState<string>();
  // The current content after a conflict, shown beside the draft so that the person's text is never lost.
  const [theirs, setTheirs] = useState<Schemas["MemoryWithContent"]>();
  const action = useAction();
  const refresh = async () => {
    await invalidate(storesKey(org, project));
  };
  const data = file.data;
  if (file.error) return <ErrorNotice error={file.error} />;
  if (!data) return <p className="muted">Loading the file…</p>;
  const startEditing = () => {
    setDraft(data.content);
    setReadAt(data.digest);
    setTheirs(undefined);
    setEditing(true);
  };
  // Saving next is guarded by the digest just read: the draft replaces their version only if nobody wrote again.
  const loadTheirs = () =>
    void action.run(async () => {
      const current = await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}", { params: { path } }));
      setTheirs(current);
      setReadAt(current.digest);
      await refresh();
    });
  const save = () =>
    void action.run(async () => {
      await call(
        api.PUT("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories", {
          params: { path: { orgID: org, projectID: project, memoryStoreID: store.id } },
          body: { path: data.path, content: draft, ...(readAt ? { expected_digest: readAt } : {}) },
        }),
      );
      setEditing(false);
      setTheirs(undefined);
      await refresh();
    });
  const conflict = isApiError(action.error, 409) && action.error.code === "file_content_conflict";
  return (
    <section aria-labelledby="file-title" className="card">
      <h3 id="file-title">
        {store.name}/{data.path}
      </h3>
      <p className="muted small">
        Version {data.version} · {bytes(data.size_bytes)} · <code>{data.digest}</code> · updated <RelativeTime at={data.updated_at} />
      </p>
      {editing ? (
        <div className="stack">
          <Field label={`Content of ${data.path}`} id="memory-editor">
            <textarea id="memory-editor" className="w-full font-mono" rows={14} value={draft} onChange={(event) => setDraft(event.target.value)} />
          </Field>
          {conflict ? (
            <p role="alert" className="error">
              Not saved: someone changed {data.path} after you opened it. Your text is still here. Load the current version to see their change, make
              your text include it, and save again.
            </p>
          ) : (
            <ErrorNotice error={action.error} />
          )}
          {theirs ? (
            <div>
              <p className="small">
                The current version ({theirs.version}), which your next save replaces:
              </p>
              <pre className="memory-content max-h-96 overflow-auto whitespace-pre-wrap" aria-label={`Current content of ${data.path}`} tabIndex={0}>
                {theirs.content}
              </pre>
            </div>
          ) : null}
          <div className="actions">
            <button type="button" className="primary" disabled={action.busy} onClick={save}>
              Save
            </button>
            {conflict ? (
              <button type="button" className="secondary" disabled={action.busy} onClick={loadTheirs}>
                Load the current version
              </button>
            ) : null}
            <button type="button" className="secondary" onClick={() => setEditing(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <>
          <pre className="memory-content max-h-96 overflow-auto whitespace-pre-wrap" aria-label={`Content of ${data.path}`} tabIndex={0}>
            {data.content}
          </pre>
          <div className="actions">
            <button type="button" className="secondary" disabled={!store.writable} title={store.writable ? undefined : "The store is read-only."} onClick={startEditing}>
              Edit
            </button>
            <DeleteButton
              label={`Delete file ${data.path}`}
              name={`file ${data.path}`}
              consequence={`This deletes ${data.path} from ${store.name}. The deletion is kept as a version, with the earlier versions; the path can be written again.`}
              remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}", { params: { path } }))}
              removed={() => {
                void refresh();
                go(base, { store: store.id });
              }}
            />
          </div>
        </>
      )}
      <Versions org={org} project={project} store={store} memory={data} />
    </section>
  );
}

function Versions({ org, project, store, memory }: { org: string; project: string; store: Store; memory: Memory }) {
  const path = { orgID: org, projectID: project, memoryStoreID: store.id, memoryID: memory.id };
  const [cursor, setCursor] = useState<string>();
  const [shown, setShown] = useState<number>();
  const versions = useQuery({
    queryKey: storesKey(org, project, store.id, "file", memory.id, "versions", cursor),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}/versions", { params: { path, query: { limit: PAGE, ...(cursor ? { cursor } : {}) } } })),    refetchOnMount: "always",
  });
  const next = versions.data?.next_cursor;
  return (
    <section aria-labelledby="versions-title">
      <h4 id="versions-title">Versions, newest first</h4>
      <ErrorNotice error={versions.error} />
      <Table
        label={`Versions of ${memory.path}`}
        head={["Version", "Written by", "When", "Change", "Content"]}
        empty="No versions."
        rows={(versions.data?.data ?? []).map((v) => [
          String(v.version),
          <Writer org={org} project={project} version={v} />,
          <RelativeTime at={v.created_at} />,
          v.deleted ? "deleted" : bytes(v.size_bytes),
          v.deleted ? (
            <span className="muted">none</span>
          ) : (
            <button type="button" className="secondary small-button" aria-expanded={shown === v.version} aria-label={`Show version ${v.version}`} onClick={() => setShown(shown === v.version ? undefined : v.version)}>
              {shown === v.version ? "Hide" : "Show"}
            </button>
          ),
        ])}
      />
      {next ? (
        <button type="button" className="secondary small-button" onClick={() => setCursor(next)}>
          Older versions
        </button>
      ) : null}
      {shown !== undefined ? <VersionContent org={org} project={project} store={store} memory={memory} version={shown} /> : null}
    </section>
  );
}

/** Who wrote a version: a person, an agent (linked, with the tool call), or an org API key. */
function Writer({ org, project, version }: { org: string; project: string; version: Version }) {
  const writer = version.written_by;
  if (writer.kind === "agent") {
    return (
      <span>
        agent <Link to={`/orgs/${org}/projects/${project}/agents/${writer.id}`}>{writer.id}</Link>
        {version.tool_call_id ? <span className="muted small"> (tool call {version.tool_call_id})</span> : null}
      </span>
    );
  }
  return <span>{writer.kind === "user" ? `user ${writer.id}` : `API key ${writer.id}`}</span>;
}

function VersionContent({ org, project, store, memory, version }: { org: string; project: string; store: Store; memory: Memory; version: number }) {
  const content = useQuery({
    queryKey: storesKey(org, project, store.id, "file", memory.id, "version", version),
    queryFn: () =>
      call(
        api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/memory-stores/{memoryStoreID}/memories/{memoryID}/versions/{version}", {
          params: { path: { orgID: org, projectID: project, memoryStoreID: store.id, memoryID: memory.id, version } },
        }),
      ),
  });
  return (
    <div className="card">
      <h5>
        {memory.path} at version {version}
      </h5>
      <ErrorNotice error={content.error} />
      {content.data ? (
        <pre className="memory-content max-h-96 overflow-auto whitespace-pre-wrap" aria-label={`Content of version ${version}`} tabIndex={0}>
          {content.data.content ?? ""}
        </pre>
      ) : null}
    </div>
  );
}
