import type { FormEvent } from "react";
import { api, call, type Schemas } from "../api/client";
import { useQuery } from "@tanstack/react-query";
import { keys, useInvalidate } from "../query";
import { ErrorNotice, Field, Page, useAction, RelativeTime } from "../ui";
import { GrantedTo, useProjects } from "../widgets";

/** The form's fields as multipart (docs/skills.md): openapi-fetch sends a FormData body as it is. */
const asForm = (form: FormData) => () => form;

/**
 * The organization's skills: upload an archive (a new skill, or a new revision of one), and grant a skill
 * to a project, and revoke a grant (`DELETE …/skills/{id}/grants/{grantID}`).
 */
export function Skills({ org }: { org: string }) {
  // Each skill's grants sit under the skills' key.
  const skillsKey = keys.org(org, "skills");
  const skills = useQuery({ queryKey: skillsKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/skills", { params: { path: { orgID: org }, query: { limit: 100 } } })) });
  const projects = useProjects(org);
  const invalidate = useInvalidate();
  const upload = useAction({ invalidates: [skillsKey] });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const file = new FormData(formEl).get("archive");
    const form = new FormData();
    form.set("owner", JSON.stringify({ kind: "org" }));
    if (file) form.set("archive", file);
    void upload.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/skills", { params: { path: { orgID: org } }, body: {} as never, bodySerializer: asForm(form) }));
      formEl.reset();
    });
  };
  return (
    <Page title="Skills">
      <ErrorNotice error={skills.error ?? projects.error} />
      {skills.data?.data.length === 0 ? <p className="muted">No skills yet.</p> : null}
      <ul className="list" aria-label="Skills">
        {skills.data?.data.map((skill) => (
          <SkillItem key={skill.id} org={org} skill={skill} projects={projects.data ?? []} changed={() => void invalidate(skillsKey)} />
        ))}
      </ul>
      <h2>Upload a skill</h2>
      <form onSubmit={submit} className="inline-form">
        <Field label="Archive (.zip or .tar.gz with SKILL.md)" id="skill-archive">
          <input id="skill-archive" name="archive" type="file" accept=".zip,.tar.gz,.tgz" required />
        </Field>
        <button className="primary" disabled={upload.busy}>
          Upload
        </button>
      </form>
      <ErrorNotice error={upload.error} />
    </Page>
  );
}

function SkillItem(props: { org: string; skill: Schemas["Skill"]; projects: Schemas["Project"][]; changed: () => void }) {
  const { org, skill } = props;
  const path = { orgID: org, skillID: skill.id };
  const grantsKey = keys.org(org, "skills", skill.id, "grants");
  const grants = useQuery({ queryKey: grantsKey, queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/skills/{skillID}/grants", { params: { path, query: { limit: 100 } } })) });
  const invalidate = useInvalidate();
  const action = useAction();
  const revise = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formEl = event.currentTarget;
    const file = new FormData(formEl).get("archive");
    const form = new FormData();
    if (file) form.set("archive", file);
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/skills/{skillID}", { params: { path }, body: {} as never, bodySerializer: asForm(form) }));
      formEl.reset();
      props.changed();
    });
  };
  const grant = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const target = String(new FormData(event.currentTarget).get("project"));
    void action.run(async () => {
      await call(api.POST("/api/v1/orgs/{orgID}/skills/{skillID}/grants", { params: { path }, body: { target_project_id: target } }));
      await invalidate(grantsKey);
    });
  };
  const granted = grants.data?.data ?? [];
  return (
    <li className="skill">
      <div>
        <strong>{skill.name}</strong> <span className="badge">revision {skill.revision}</span> <span className="muted small">{skill.owner.kind} · updated {<RelativeTime at={skill.updated_at} />}</span>
        <p className="muted">{skill.description}</p>
        <GrantedTo
          what={skill.name}
          grants={grants.data ? granted.map((g) => ({ grantID: g.grant.id, projectID: g.target_project.id, projectName: g.target_project.name })) : undefined}
          revoke={(g) => call(api.DELETE("/api/v1/orgs/{orgID}/skills/{skillID}/grants/{grantID}", { params: { path: { ...path, grantID: g.grantID } } }))}
          revoked={() => void invalidate(grantsKey)}
        />
      </div>
      <form onSubmit={revise} className="inline-form">
        <Field label={`New revision of ${skill.name}`} id={`${skill.id}-archive`}>
          <input id={`${skill.id}-archive`} name="archive" type="file" accept=".zip,.tar.gz,.tgz" required />
        </Field>
        <button className="secondary" disabled={action.busy}>
          Upload revision
        </button>
      </form>
      <form onSubmit={grant} className="inline-form">
        <Field label={`Grant ${skill.name} to`} id={`${skill.id}-project`}>
          <select id={`${skill.id}-project`} name="project">
            {props.projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </select>
        </Field>
        <button className="secondary" disabled={action.busy}>
          Grant
        </button>
      </form>
      <ErrorNotice error={action.error ?? grants.error} />
    </li>
  );
}
