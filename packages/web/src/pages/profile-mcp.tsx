import { useState, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { ErrorNotice, Field, useAction } from "../ui";
import { text } from "../widgets";

/**
 * A profile's face to other AI clients (docs/mcp.md): `mcp_tool` offers it as a tool of the project's MCP
 * endpoint, named after the profile, with `description` as the tool's description (also what the profile
 * is for). Both are saved with one PATCH; the switch says what it does in words.
 */
export function ProfileMcp(props: { org: string; project: string; profile: Schemas["AgentProfile"]; changed: () => void }) {
  const { profile } = props;
  const action = useAction();
  const [saved, setSaved] = useState<string>();
  const save = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const mcpTool = form.get("mcp_tool") === "on";
    setSaved(undefined);
    void action.run(async () => {
      await call(
        api.PATCH("/api/v1/orgs/{orgID}/projects/{projectID}/agent-profiles/{agentProfileID}", {
          params: { path: { orgID: props.org, projectID: props.project, agentProfileID: profile.id } },
          body: { description: text(form, "description"), mcp_tool: mcpTool },
        }),
      );
      setSaved(mcpTool ? `${profile.name} is a tool of the project's MCP endpoint.` : `${profile.name} is not offered over MCP.`);
      props.changed();
    });
  };
  return (
    <form onSubmit={save} className="stack" aria-label={`Description and MCP tool of ${profile.name}`}>
      <Field label={`Description of ${profile.name}`} id={`${profile.id}-description`} hint="What its agents are for; MCP clients see it as the tool's description.">
        <textarea id={`${profile.id}-description`} name="description" rows={2} maxLength={1024} defaultValue={profile.description} />
      </Field>
      <label className="flex items-center gap-2">
        <input type="checkbox" role="switch" name="mcp_tool" defaultChecked={profile.mcp_tool} /> Offer as an MCP tool ({profile.name})
      </label>
      <button className="secondary small-button" disabled={action.busy}>
        Save description and MCP
      </button>
      {saved ? (
        <p role="status" className="small">
          {saved}
        </p>
      ) : null}
      <ErrorNotice error={action.error} />
    </form>
  );
}
