import type { FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, useAction, RelativeTime, whyDisabled } from "../ui";
import { DeleteButton, Table, text } from "../widgets";
import { ProfileMcp } from "./profile-mcp";

type Profile = Schemas["AgentProfile"];

/** The project's agents (first 100): their current configs are the configs a profile can start from. */
export function useAgents(org: string, project: string) {
  return useQuery({
    queryKey: keys.agents(org, project, { picker: true }),
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path: { orgID: org, projectID: project }, query: { limit: 100 } } }))).data,
  });
}

/** The project's profiles (first 100). */
export function useProfiles(org: string, project: string) {
  return useQuery({
    queryKey: keys.project(org, project, "profiles"),
    queryFn: async () => (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles", { params: { path: { orgID: org, projectID: project }, query: { limit: 100 } } }))).data,
  });
}

/**
 * Agent profiles: a name for a config the project keeps using (agents launch from it, schedules and
 * integrations name it). Create one from an existing config (an agent's current one), rename it, move it
 * to another config (`…/config`, guarded by the config it had), delete it.
 */
export function Profiles({ org, project }: { org: string; project: string }) {
  const profiles = useProfiles(org, project);
  const agents = useAgents(org, project);
  const invalidate = useInvalidate();
  const changed = () => void invalidate(keys.project(org, project, "profiles"));
  const action = useAction({ invalidates: [keys.project(org, project, "profiles")] });
  const path = { orgID: org, projectID: project };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles", { params: { path }, body: { name: text(form, "name"), config: text(form, "config") } }));
      formEl.reset();
    });
  };
  const configs = configChoices(agents.data ?? []);
  return (
    <Page title="Agent profiles">
      <ErrorNotice error={profiles.error ?? agents.error} />
      <Table
        label="Agent profiles"
        head={["Name", "Model", "Generation", "Updated", "Change"]}
        empty="No profiles yet. A profile is a named config to launch agents and schedules from: create one below from an agent's config."
        rows={(profiles.data ?? []).map((p) => [
          p.name,
          `${p.current_config.model.provider_config} / ${p.current_config.model.name}`,
          String(p.current_generation),
          <RelativeTime at={p.updated_at} />,
          <ProfileEdit org={org} project={project} profile={p} configs={configs} changed={changed} />,
        ])}
      />
      <h2>Create a profile</h2>
      {agents.data && configs.length === 0 ? <p className="muted" id="profile-why">Launch an agent first: a profile starts from an agent's config.</p> : null}
      <form onSubmit={submit} className="inline-form" aria-label="Create a profile">
        <Field label="Profile name" id="profile-name">
          <input id="profile-name" name="name" required maxLength={64} />
        </Field>
        <ConfigSelect id="profile-config" label="Config" configs={configs} />
        <button className="primary" disabled={action.busy || configs.length === 0} {...whyDisabled("profile-why", configs.length === 0 ? "Launch an agent first: a profile starts from an agent's config." : undefined)}>
          Create profile
        </button>
      </form>
      <ErrorNotice error={action.error} />
    </Page>
  );
}

interface ConfigChoice {
  id: string;
  label: string;
}

/** One choice per distinct config, named after the agents that run it. */
function configChoices(agents: Schemas["Agent"][]): ConfigChoice[] {
  const names = new Map<string, string[]>();
  for (const agent of agents) names.set(agent.current_config_id, [...(names.get(agent.current_config_id) ?? []), agent.name]);
  return [...names].map(([id, agentNames]) => ({ id, label: `config of ${agentNames.join(", ")}` }));
}

function ConfigSelect(props: { id: string; label: string; configs: ConfigChoice[]; exclude?: string }) {
  return (
    <Field label={props.label} id={props.id}>
      <select id={props.id} name="config" required>
        {props.configs
          .filter((c) => c.id !== props.exclude)
          .map((c) => (
            <option key={c.id} value={c.id}>
              {c.label}
            </option>
          ))}
      </select>
    </Field>
  );
}

function ProfileEdit(props: { org: string; project: string; profile: Profile; configs: ConfigChoice[]; changed: () => void }) {
  const { profile } = props;
  const path = { orgID: props.org, projectID: props.project, agentProfileID: profile.id };
  const action = useAction();
  const rename = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = text(new FormData(event.currentTarget), "name");
    void action.run(async () => {
      await call(api.PATCH("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles/{agentProfileID}", { params: { path }, body: { name } }));
      props.changed();
    });
  };
  const move = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const config = text(new FormData(event.currentTarget), "config");
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles/{agentProfileID}/config", { params: { path }, body: { config, expected_current_config_id: profile.current_config_id } }));
      props.changed();
    });
  };
  const others = props.configs.filter((c) => c.id !== profile.current_config_id);
  return (
    <div className="stack">
      <form onSubmit={rename} className="inline-form" aria-label={`Rename ${profile.name}`}>
        <Field label={`New name for ${profile.name}`} id={`${profile.id}-name`}>
          <input id={`${profile.id}-name`} name="name" required maxLength={64} defaultValue={profile.name} />
        </Field>
        <button className="secondary small-button" disabled={action.busy}>
          Rename
        </button>
      </form>
      {others.length > 0 ? (
        <form onSubmit={move} className="inline-form" aria-label={`Change the config of ${profile.name}`}>
          <ConfigSelect id={`${profile.id}-config`} label={`New config for ${profile.name}`} configs={others} />
          <button className="secondary small-button" disabled={action.busy}>
            Use config
          </button>
        </form>
      ) : null}
      <ProfileMcp org={props.org} project={props.project} profile={profile} changed={props.changed} />
      <DeleteButton label={`Delete profile ${profile.name}`} name={`profile ${profile.name}`} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles/{agentProfileID}", { params: { path } }))} removed={props.changed} />
      <ErrorNotice error={action.error} />
    </div>
  );
}
