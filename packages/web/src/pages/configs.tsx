import { useRef, useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { api, ApiError, call, type Schemas } from "../api/client";
import { CONFIG_ISSUES_ID, ConfigEditor, ConfigIssues, type ConfigEditorHandle } from "../editor";
import { keys, useInvalidate } from "../query";
import { navigate } from "../router";
import { Empty, ErrorNotice, Link, Page, RelativeTime, useAction } from "../ui";
import { Table } from "../widgets";
import { useProfiles } from "./profiles";

type Config = Schemas["AgentConfig"];

/** `acfg_…` is long and its start is alike for configs made close together: tables show its end; the full id is on hover. */
const shortId = (id: string) => `acfg_…${id.slice(-8)}`;

/** The profiles of the project whose current config is each config, by config id. */
function profilesByConfig(profiles: Schemas["AgentProfile"][] | undefined): Map<string, string[]> {
  const byConfig = new Map<string, string[]>();
  for (const profile of profiles ?? []) byConfig.set(profile.current_config.id, [...(byConfig.get(profile.current_config.id) ?? []), profile.name]);
  return byConfig;
}

/**
 * The project's agent configs (`GET …/agent-configs`), newest first, a page at a time: each with its model,
 * when it was made and the profiles that point at it, and a link to open it in the editor.
 */
export function Configs({ org, project }: { org: string; project: string }) {
  // The cursors of the pages before this one, so Previous goes back without the API paging backwards.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const page = useQuery({
    queryKey: keys.project(org, project, "configs", { cursor }),
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs", { params: { path: { orgID: org, projectID: project }, query: { limit: 50, ...(cursor ? { cursor } : {}) } } })),
  });
  const profiles = useProfiles(org, project);
  const usedBy = profilesByConfig(profiles.data);
  const base = `/orgs/${org}/projects/${project}`;
  const configs = page.data?.data ?? [];
  return (
    <Page title="Agent configs" actions={<Link className="button primary" to={`${base}/launch`}>Write a config</Link>}>
      <p className="muted small">
        A config is compiled from YAML and never changes: editing one saves a new config. Agents run one, and profiles name one to launch from.
      </p>
      <ErrorNotice error={page.error ?? profiles.error} />
      {page.data && configs.length === 0 && !cursor ? (
        <Empty title="No configs yet.">
          <p>
            <Link to={`${base}/launch`}>Launch an agent</Link>: its config is saved here.
          </p>
        </Empty>
      ) : null}
      {configs.length > 0 ? (
        <Table
          label="Agent configs"
          head={["Config", "Model", "Created", "Profiles"]}
          empty=""
          rows={configs.map((config) => [
            <Link to={`${base}/configs/${config.id}`} className="mono whitespace-nowrap" title={config.id}>
              {shortId(config.id)}
            </Link>,
            <span className="mono text-sm whitespace-nowrap">
              {config.model.provider_config}/{config.model.name}
            </span>,
            <RelativeTime at={config.created_at} />,
            usedBy.get(config.id)?.join(", ") ?? <span className="text-muted">none</span>,
          ])}
        />
      ) : null}
      <div className="mt-3 flex gap-2">
        {cursors.length > 0 ? (
          <button type="button" className="secondary" onClick={() => setCursors((was) => was.slice(0, -1))}>
            Previous page
          </button>
        ) : null}
        {page.data?.next_cursor ? (
          <button type="button" className="secondary" onClick={() => setCursors((was) => [...was, page.data!.next_cursor!])}>
            Next page
          </button>
        ) : null}
      </div>
    </Page>
  );
}

/**
 * One config in the editor: its source with completion, hover and svc's checks as you type. Saving the
 * edited text compiles a new config (the same text answers with this one); Launch starts from it.
 */
export function ConfigPage({ org, project, config: configID }: { org: string; project: string; config: string }) {
  const path = { orgID: org, projectID: project };
  const config = useQuery({
    queryKey: keys.project(org, project, "configs", configID),
    // A config never changes.
    staleTime: Infinity,
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs/{agentConfigID}", { params: { path: { ...path, agentConfigID: configID } } })),
  });
  const profiles = useProfiles(org, project);
  const [edited, setEdited] = useState<string>();
  const [issues, setIssues] = useState<Schemas["ErrorIssue"][]>([]);
  const [note, setNote] = useState<string>();
  const editor = useRef<ConfigEditorHandle>(null);
  const invalidate = useInvalidate();
  const save = useAction();
  const base = `/orgs/${org}/projects/${project}`;
  const source = edited ?? config.data?.source ?? "";
  const usedBy = profilesByConfig(profiles.data).get(configID) ?? [];

  const saveNew = () => {
    setIssues([]);
    setNote(undefined);
    void save.run(async () => {
      try {
        const made: Config = await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agent-configs", { params: { path }, body: { source, source_format: "yaml" } }));
        if (made.id === configID) {
          setNote("Nothing to save: this text compiles to this config.");
          return;
        }
        await invalidate(keys.project(org, project, "configs"));
        setEdited(undefined);
        navigate(`${base}/configs/${made.id}`);
      } catch (err) {
        if (err instanceof ApiError) setIssues(err.issues);
        throw err;
      }
    });
  };

  return (
    <Page title={`Config ${shortId(configID)}`}>
      <ErrorNotice error={config.error} />
      {config.data ? (
        <p className="muted small">
          <span className="mono" title={config.data.id}>
            {config.data.id}
          </span>{" "}
          · {config.data.model.provider_config}/{config.data.model.name} · created <RelativeTime at={config.data.created_at} /> ·{" "}
          {usedBy.length > 0 ? `current config of ${usedBy.length === 1 ? "profile" : "profiles"} ${usedBy.join(", ")}` : "no profile points at it"}
        </p>
      ) : null}
      <div className="field">
        <label htmlFor="config-source" id="config-source-label">
          Config (YAML)
        </label>
        <ConfigEditor
          ref={editor}
          id="config-source"
          labelledBy="config-source-label"
          org={org}
          project={project}
          value={source}
          disabled={!config.data}
          invalid={issues.length > 0}
          issues={issues}
          {...(issues.length > 0 ? { describedBy: CONFIG_ISSUES_ID } : {})}
          onChange={setEdited}
        />
      </div>
      <ConfigIssues issues={issues} editor={editor} />
      <ErrorNotice error={save.error} />
      {note ? <p role="status">{note}</p> : null}
      <div className="actions mt-3">
        <button type="button" className="primary" disabled={save.busy || edited === undefined} onClick={saveNew} aria-describedby={edited === undefined ? "config-save-why" : undefined}>
          Save as a new config
        </button>
        <Link className="button secondary" to={`${base}/launch?config=${configID}`}>
          Launch an agent from this config
        </Link>
        <Link to={`${base}/configs`}>All configs</Link>
      </div>
      {edited === undefined ? (
        <p className="small muted" id="config-save-why">
          Edit the text to save it as a new config: this one never changes.
        </p>
      ) : null}
    </Page>
  );
}
