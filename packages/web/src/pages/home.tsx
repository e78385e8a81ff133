import type { FormEvent } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { api, call, type Schemas } from "../api/client";
import { Redirect } from "../app";
import { navigate } from "../router";
import { useSession } from "../session";
import { Empty, ErrorNotice, Field, Page, RelativeTime, useAction } from "../ui";
import { keys } from "../query";
import { useProjects } from "../widgets";
import { AuthCard } from "./auth";

/** `/`: the first organization, or (with none yet) the invitations waiting for the user and a form to create one. */
export function Home() {
  const { me } = useSession();
  const first = me?.orgs[0];
  if (first) return <Redirect to={`/orgs/${first.id}`} />;
  return <CreateOrganization />;
}

function useMyInvitations() {
  return useQuery({
    queryKey: keys.invitations(),
    queryFn: async () => (await call(api.GET("/api/v1/invitations", { params: { query: { limit: 100 } } }))).data,
  });
}

/** `/invitations`: the signed-in person's pending invitations, each accepted or declined here. */
export function Invitations() {
  const invitations = useMyInvitations();
  return (
    <Page title="Invitations">
      <ErrorNotice error={invitations.error} />
      {invitations.data && invitations.data.length === 0 ? (
        <Empty title="No invitations wait for you.">
          <p>When someone invites your email address to an organization, it shows here.</p>
        </Empty>
      ) : null}
      <InvitationList invitations={invitations.data ?? []} />
    </Page>
  );
}

function InvitationList({ invitations }: { invitations: Schemas["OrgInvitation"][] }) {
  if (invitations.length === 0) return null;
  return (
    <ul className="list" aria-label="Pending invitations">
      {invitations.map((invitation) => (
        <InvitationItem key={invitation.id} invitation={invitation} />
      ))}
    </ul>
  );
}

function InvitationItem({ invitation }: { invitation: Schemas["OrgInvitation"] }) {
  const { refresh } = useSession();
  const cache = useQueryClient();
  const action = useAction();
  const answer = (how: "accept" | "decline") =>
    void action.run(async () => {
      const path = { invitationID: invitation.id };
      if (how === "accept") await call(api.POST("/api/v1/invitations/{invitationID}/accept", { params: { path } }));
      else await call(api.POST("/api/v1/invitations/{invitationID}/decline", { params: { path } }));
      await cache.invalidateQueries({ queryKey: keys.invitations() });
      if (how === "accept") {
        await refresh();
        navigate(`/orgs/${invitation.org_id}`);
      }
    });
  return (
    <li>
      <span className="grow">
        <strong>{invitation.org_name}</strong> invited {invitation.email} as {invitation.org_role} <span className="small muted"><RelativeTime at={invitation.created_at} /></span>
      </span>
      <span className="actions">
        <button type="button" className="primary small-button" disabled={action.busy} onClick={() => answer("accept")} aria-label={`Accept the invitation to ${invitation.org_name}`}>
          Accept
        </button>
        <button type="button" className="secondary small-button" disabled={action.busy} onClick={() => answer("decline")} aria-label={`Decline the invitation to ${invitation.org_name}`}>
          Decline
        </button>
      </span>
      <ErrorNotice error={action.error} />
    </li>
  );
}

function CreateOrganization() {
  const { refresh } = useSession();
  const action = useAction();
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get("name"));
    void action.run(async () => {
      const created = await call(api.POST("/api/v1/orgs", { body: { name } }));
      await refresh();
      navigate(`/orgs/${created.org.id}/projects/${created.project.id}/agents`, true);
    });
  };
  const invitations = useMyInvitations();
  const pending = invitations.data ?? [];
  return (
    <AuthCard title={pending.length > 0 ? "Join or create an organization" : "Create an organization"}>
      {pending.length > 0 ? (
        <>
          <h2>Invitations for you</h2>
          <InvitationList invitations={pending} />
          <h2>Or create your own</h2>
        </>
      ) : null}
      <p className="muted">An organization holds your projects, agents, machines and secrets. It starts with one project.</p>
      <form onSubmit={submit}>
        <Field label="Organization name" id="org-name">
          <input id="org-name" name="name" required maxLength={64} />
        </Field>
        <ErrorNotice error={action.error} />
        <button className="primary wide" disabled={action.busy}>
          Create organization
        </button>
      </form>
    </AuthCard>
  );
}

/** `/orgs/:org`: the organization's first project. */
export function OrgHome({ org }: { org: string }) {
  const projects = useProjects(org);
  const first = projects.data?.[0];
  if (first) return <Redirect to={`/orgs/${org}/projects/${first.id}/agents`} />;
  if (projects.data) return <p role="status">This organization has no project you can see.</p>;
  return <ErrorNotice error={projects.error} />;
}
