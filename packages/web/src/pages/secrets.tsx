import { useState, type FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, useAction, RelativeTime } from "../ui";
import { DeleteButton, GrantedTo, GrantForm, Table, text, useProjects } from "../widgets";

/**
 * The secrets the caller may see: add an organization secret (its value is never shown again), grant an
 * organization secret to a project, see and revoke its grants (`…/secrets/{id}/grants`), delete it.
 */
export function Secrets({ org }: { org: string }) {
  const list = useQuery({ queryKey: keys.org(org, "secrets"), queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const projects = useProjects(org);
  const invalidate = useInvalidate();
  // Each secret's grants sit under the secrets' key: a change to either reads both again.
  const changed = () => void invalidate(keys.org(org, "secrets"));
  const secrets = list.data?.data ?? [];
  return (
    <Page title="Secrets">
      <ErrorNotice error={list.error ?? projects.error} />
      <Table
        label="Secrets"
        head={["Name", "Owner", "Kind", "Version", "Updated", "Granted to", ""]}
        empty="No secrets yet. Add one below: your model provider's API key is the usual first."
        rows={secrets.map((s) => [
          s.name,
          s.owner.kind,
          s.kind,
          String(s.current_version_number),
          <RelativeTime at={s.updated_at} />,
          s.owner.kind === "org" ? <SecretGrants org={org} secret={s} key={s.id} /> : <span className="small muted">its owner only</span>,
          <DeleteButton label={`Delete secret ${s.name}`} name={s.name} remove={() => call(api.DELETE("/api/v1/orgs/{orgID}/secrets/{secretID}", { params: { path: { orgID: org, secretID: s.id } } }))} removed={changed} />,
        ])}
      />
      <AddSecret org={org} />
      <GrantForm
        what="Secret"
        projects={projects.data}
        items={secrets.filter((x) => x.owner.kind === "org").map((x) => ({ id: x.id, name: x.name }))}
        grant={(secretID, projectID) => call(api.POST("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path: { orgID: org, secretID } }, body: { target_project_id: projectID } }))}
        granted={changed}
      />
    </Page>
  );
}

function SecretGrants({ org, secret }: { org: string; secret: Schemas["Secret"] }) {
  const path = { orgID: org, secretID: secret.id };
  const invalidate = useInvalidate();
  const grantsKey = keys.org(org, "secrets", secret.id, "grants");
  const grants = useQuery({ queryKey: grantsKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/secrets/{secretID}/grants", { params: { path, query: { limit: 100 } } })) });
  return (
    <>
      <ErrorNotice error={grants.error} />
      <GrantedTo
        what={secret.name}
        grants={grants.data?.data.map((g) => ({ grantID: g.grant.id, projectID: g.target_project.id, projectName: g.target_project.name }))}
        revoke={(g) => call(api.DELETE("/api/v1/orgs/{orgID}/secrets/{secretID}/grants/{grantID}", { params: { path: { ...path, grantID: g.grantID } } }))}
        revoked={() => void invalidate(grantsKey)}
      />
    </>
  );
}

interface MaterialField {
  name: string;
  label: string;
  optional?: boolean;
  secret?: boolean;
  multiline?: boolean;
  hint?: string;
}

/** Every kind of secret the server stores (SecretMaterial in api/openapi.json) and the fields each takes. */
const KINDS: Array<{ kind: string; label: string; use: string; fields: MaterialField[] }> = [
  { kind: "generic", label: "API key or other single value", use: "Model providers' API keys, MCP servers' tokens, Discord bot tokens.", fields: [{ name: "value", label: "Value", secret: true }] },
  {
    kind: "slack_app_credentials",
    label: "Slack app credentials",
    use: "A Slack integration set up with your own Slack app.",
    fields: [
      { name: "access_token", label: "Bot token (xoxb-…)", secret: true },
      { name: "client_id", label: "Client ID" },
      { name: "client_secret", label: "Client secret", secret: true },
      { name: "signing_secret", label: "Signing secret", secret: true },
    ],
  },
  {
    kind: "github_app_credentials",
    label: "GitHub app credentials",
    use: "A GitHub integration through your own GitHub App.",
    fields: [
      { name: "app_id", label: "App ID", hint: "The App's numeric id." },
      { name: "private_key", label: "Private key (PEM)", secret: true, multiline: true, hint: "Starts with -----BEGIN RSA PRIVATE KEY-----." },
      { name: "webhook_secret", label: "Webhook secret", optional: true, secret: true },
      { name: "client_id", label: "Client ID", optional: true },
      { name: "client_secret", label: "Client secret", optional: true, secret: true },
    ],
  },
  {
    kind: "aws_credentials",
    label: "AWS credentials",
    use: "Cloud machine pools and AWS-hosted models.",
    fields: [
      { name: "access_key_id", label: "Access key ID" },
      { name: "secret_access_key", label: "Secret access key", secret: true },
      { name: "session_token", label: "Session token", optional: true, secret: true },
      { name: "role_arn", label: "Role ARN to assume", optional: true },
      { name: "external_id", label: "External ID", optional: true, hint: "Only with a role ARN." },
    ],
  },
  {
    kind: "oauth_token_set",
    label: "OAuth access token",
    use: "A token obtained elsewhere for an OAuth-protected service (such as an MCP server).",
    fields: [
      { name: "access_token", label: "Access token", secret: true },
      { name: "token_type", label: "Token type", optional: true, hint: "Usually Bearer." },
      { name: "scopes", label: "Scopes", optional: true },
      { name: "mcp_url", label: "MCP server URL", optional: true },
    ],
  },
];

/** Adds an organization secret of any kind; its value is never shown again. */
function AddSecret({ org }: { org: string }) {
  const action = useAction({ invalidates: [keys.org(org, "secrets")] });
  const [kind, setKind] = useState("generic");
  const spec = KINDS.find((k) => k.kind === kind)!;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    const material: Record<string, string> = { kind };
    for (const field of spec.fields) {
      const value = field.multiline || field.secret ? String(form.get(field.name) ?? "") : text(form, field.name);
      if (value !== "" || !field.optional) material[field.name] = value;
    }
    void action.run(async () => {
      // openapi-typescript drops the schema's if/then branches, so the material is typed by its kind only.
      await call(api.POST("/api/v1/orgs/{orgID}/secrets", { params: { path: { orgID: org } }, body: { owner: { kind: "org" }, name: text(form, "name"), material: material as { kind: "generic" } } }));
      formEl.reset();
    });
  };
  return (
    <>
      <h2>Add an organization secret</h2>
      <form onSubmit={submit} className="inline-form" aria-label="Add an organization secret">
        <Field label="Kind" id="secret-kind" hint={spec.use}>
          <select id="secret-kind" value={kind} onChange={(event) => setKind(event.target.value)}>
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Name" id="secret-name">
          <input id="secret-name" name="name" required maxLength={64} />
        </Field>
        {spec.fields.map((field) => {
          const id = `secret-${kind}-${field.name}`;
          const label = field.optional ? `${field.label} (optional)` : field.label;
          return (
            <Field key={id} label={label} id={id} {...(field.hint ? { hint: field.hint } : {})}>
              {field.multiline ? (
                <textarea id={id} name={field.name} rows={4} required={!field.optional} className="mono" autoComplete="off" spellCheck={false} />
              ) : (
                <input id={id} name={field.name} type={field.secret ? "password" : "text"} autoComplete="off" required={!field.optional} />
              )}
            </Field>
          );
        })}
        <button className="primary" disabled={action.busy}>
          Add secret
        </button>
      </form>
      <ErrorNotice error={action.error} />
    </>
  );
}
