import { useState, type FormEvent } from "react";
import { api, call } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys } from "../query";
import { ErrorNotice, Field, Page, useAction, when, RelativeTime } from "../ui";
import { Shown, Table, text } from "../widgets";

/*
 * Members, invitations and organization API keys, and the caller's personal access tokens: each a list
 * (first page of the API's cursor list) and the form that adds to it. A key or token is shown once, as
 * the API gives it once.
 */

export function Members({ org }: { org: string }) {
  const members = useQuery({ queryKey: keys.org(org, "members"), queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/members", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const invitations = useQuery({ queryKey: keys.org(org, "invitations"), queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/invitations", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const apiKeys = useQuery({ queryKey: keys.org(org, "api-keys"), queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/api-keys", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const invite = useAction({ invalidates: [keys.org(org, "invitations")] });
  const keyAction = useAction({ invalidates: [keys.org(org, "api-keys")] });
  const [token, setToken] = useState<string>();
  const submitInvite = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const form = new FormData(formEl);
    void invite.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/invitations", { params: { path: { orgID: org } }, body: { email: text(form, "email"), role: form.get("role") === "admin" ? "admin" : "member" } }));
      formEl.reset();
    });
  };
  const submitKey = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void keyAction.run(async () => {
      const made = await call(api.POST("/api/v1/orgs/{orgID}/api-keys", { params: { path: { orgID: org } }, body: { name: text(form, "name"), org_role: form.get("role") === "admin" ? "admin" : "member" } }));
      setToken(made.token);
    });
  };
  return (
    <Page title="Members">
      <ErrorNotice error={members.error ?? invitations.error ?? apiKeys.error} />
      <Table label="Members" head={["Name", "Email", "Role", "Since"]} empty="No members." rows={(members.data?.data ?? []).map((m) => [m.display_name, m.email, m.role, <RelativeTime at={m.created_at} />])} />
      <h2>Invitations</h2>
      <Table label="Invitations" head={["Email", "Role", "Sent"]} empty="No open invitations. Invite someone by email below." rows={(invitations.data?.data ?? []).map((i) => [i.email, i.org_role, <RelativeTime at={i.created_at} />])} />
      <form onSubmit={submitInvite} className="inline-form">
        <Field label="Email" id="invite-email">
          <input id="invite-email" name="email" type="email" required />
        </Field>
        <RoleField id="invite-role" />
        <button className="primary" disabled={invite.busy}>
          Invite
        </button>
      </form>
      <ErrorNotice error={invite.error} />
      <h2>Organization API keys</h2>
      <Table
        label="Organization API keys"
        head={["Name", "Role", "Created", "Last used", "Revoked"]}
        empty="No API keys. Create one below for automation that acts for the organization."
        rows={(apiKeys.data?.data ?? []).map((k) => [k.name, k.org_role, <RelativeTime at={k.created_at} />, <RelativeTime at={k.last_used_at ?? undefined} />, <RelativeTime at={k.revoked_at ?? undefined} />])}
      />
      <form onSubmit={submitKey} className="inline-form">
        <Field label="Key name" id="key-name">
          <input id="key-name" name="name" required maxLength={64} />
        </Field>
        <RoleField id="key-role" />
        <button className="primary" disabled={keyAction.busy}>
          Create key
        </button>
      </form>
      <ErrorNotice error={keyAction.error} />
      <Shown label="The new key (shown once):" value={token} />
    </Page>
  );
}

function RoleField({ id }: { id: string }) {
  return (
    <Field label="Role" id={id}>
      <select id={id} name="role" defaultValue="member">
        <option value="member">member</option>
        <option value="admin">admin</option>
      </select>
    </Field>
  );
}

export function Tokens() {
  const list = useQuery({ queryKey: keys.tokens(), queryFn: () => call(api.GET("/api/v1/personal-access-tokens", { params: { query: { limit: 100 } } })) });
  const action = useAction({ invalidates: [keys.tokens()] });
  const [token, setToken] = useState<string>();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void action.run(async () => {
      const made = await call(api.POST("/api/v1/personal-access-tokens", { body: { name: text(form, "name") } }));
      setToken(made.token);
    });
  };
  const revoke = (tokenID: string) =>
    void action.run(async () => {
      await call(api.POST("/api/v1/personal-access-tokens/{tokenID}/revoke", { params: { path: { tokenID } } }));
    });
  return (
    <Page title="Personal access tokens">
      <ErrorNotice error={list.error} />
      <Table
        label="Personal access tokens"
        head={["Name", "Created", "Last used", ""]}
        empty="No tokens yet. Create one below for the CLI, the SDK or curl."
        rows={(list.data?.data ?? []).map((t) => [
          t.name,
          <RelativeTime at={t.created_at} />,
          <RelativeTime at={t.last_used_at ?? undefined} />,
          t.revoked_at ? `revoked ${when(t.revoked_at)}` : (
            <button type="button" className="secondary" disabled={action.busy} onClick={() => revoke(t.id)} aria-label={`Revoke ${t.name}`}>
              Revoke
            </button>
          ),
        ])}
      />
      <form onSubmit={submit} className="inline-form">
        <Field label="Token name" id="token-name">
          <input id="token-name" name="name" required maxLength={64} />
        </Field>
        <button className="primary" disabled={action.busy}>
          Create token
        </button>
      </form>
      <ErrorNotice error={action.error} />
      <Shown label="The new token (shown once):" value={token} />
    </Page>
  );
}
