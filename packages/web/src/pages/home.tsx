import type { FormEvent } from "react";
import { api, call } from "../api/client";
import { Redirect } from "../app";
import { navigate } from "../router";
import { useSession } from "../session";
import { ErrorNotice, Field, useAction, useLoad } from "../ui";
import { AuthCard } from "./auth";

/** `/`: the first organization, or a form to create one when the user has none yet. */
export function Home() {
  const { me } = useSession();
  const first = me?.orgs[0];
  if (first) return <Redirect to={`/orgs/${first.id}`} />;
  return <CreateOrganization />;
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
  return (
    <AuthCard title="Create an organization">
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
  const projects = useLoad(() => call(api.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: org }, query: { limit: 1 } } })), [org]);
  const first = projects.data?.data[0];
  if (first) return <Redirect to={`/orgs/${org}/projects/${first.id}/agents`} />;
  if (projects.data) return <p role="status">This organization has no project you can see.</p>;
  return <ErrorNotice error={projects.error} />;
}
