import { useEffect, type ReactNode } from "react";
import { api, call } from "./api/client";
import { AgentView } from "./pages/agent";
import { AgentsList } from "./pages/agents";
import { SignIn, SignUp } from "./pages/auth";
import { DevicePage } from "./pages/device";
import { Launch } from "./pages/launch";
import { Home, OrgHome } from "./pages/home";
import { Integrations } from "./pages/integrations";
import { Machines } from "./pages/machines";
import { Models } from "./pages/models";
import { Members, Tokens } from "./pages/org";
import { Pools } from "./pages/pools";
import { Profiles } from "./pages/profiles";
import { Schedules } from "./pages/schedules";
import { Secrets } from "./pages/secrets";
import { Skills } from "./pages/skills";
import { match, navigate, useLocation } from "./router";
import { SessionProvider, useSession } from "./session";
import { ErrorNotice, Link, useAction, useLoad } from "./ui";

export function App() {
  return (
    <SessionProvider>
      <Routes />
    </SessionProvider>
  );
}

const PROJECT = "/orgs/:org/projects/:project";

function Routes() {
  const { path } = useLocation();
  const { me } = useSession();
  if (path === "/signin") return <SignIn />;
  if (path === "/signup") return <SignUp />;
  if (path === "/device") return <DevicePage />;
  if (me === undefined) return <p className="loading" role="status">Loading…</p>;
  if (me === null) return <Redirect to={`/signin?next=${encodeURIComponent(path + location.search)}`} />;

  let params: Record<string, string> | null;
  if (path === "/" || path === "") return <Home />;
  if (path === "/tokens") return <Shell><Tokens /></Shell>;
  if ((params = match(`${PROJECT}/agents`, path))) return <Shell {...params}><AgentsList org={params.org!} project={params.project!} /></Shell>;
  if ((params = match(`${PROJECT}/launch`, path))) return <Shell {...params}><Launch org={params.org!} project={params.project!} /></Shell>;
  if ((params = match(`${PROJECT}/agents/:agent`, path))) {
    return <Shell {...params}><AgentView org={params.org!} project={params.project!} agent={params.agent!} /></Shell>;
  }
  const projectPages: Record<string, (org: string, project: string) => ReactNode> = {
    integrations: (org, project) => <Integrations org={org} project={project} />,
    profiles: (org, project) => <Profiles org={org} project={project} />,
    schedules: (org, project) => <Schedules org={org} project={project} />,
  };
  if ((params = match(`${PROJECT}/:page`, path)) && projectPages[params.page!]) {
    return <Shell org={params.org!} project={params.project!}>{projectPages[params.page!]!(params.org!, params.project!)}</Shell>;
  }
  if ((params = match("/orgs/:org", path))) return <OrgHome org={params.org!} />;
  const pages: Record<string, (org: string) => ReactNode> = {
    machines: (org) => <Machines org={org} />,
    pools: (org) => <Pools org={org} />,
    secrets: (org) => <Secrets org={org} />,
    skills: (org) => <Skills org={org} />,
    models: (org) => <Models org={org} />,
    members: (org) => <Members org={org} />,
  };
  if ((params = match("/orgs/:org/:page", path)) && pages[params.page!]) return <Shell org={params.org!}>{pages[params.page!]!(params.org!)}</Shell>;
  return (
    <Shell>
      <h1>Not found</h1>
      <p>
        No page at this address. <Link to="/">Go to the start</Link>.
      </p>
    </Shell>
  );
}

export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

/** The frame of every signed-in page: organization and project switchers, navigation, sign out. */
function Shell(props: { org?: string; project?: string; children: ReactNode }) {
  const { me, signOut } = useSession();
  const { org, project } = props;
  const projects = useLoad(async () => (org ? (await call(api.GET("/api/v1/orgs/{orgID}/projects", { params: { path: { orgID: org }, query: { limit: 100 } } }))).data : []), [org]);
  // Organization pages have no project in their address: keep showing the one last opened in this tab.
  const remembered = org ? sessionStorage.getItem(`svc:project:${org}`) : null;
  const current = project ?? projects.data?.find((p) => p.id === remembered)?.id ?? projects.data?.[0]?.id;
  useEffect(() => {
    if (org && project) sessionStorage.setItem(`svc:project:${org}`, project);
  }, [org, project]);
  const out = useAction();
  const base = org && current ? `/orgs/${org}/projects/${current}` : undefined;
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/" className="brand">
          svc
        </Link>
        <label className="switch">
          <span className="visually-hidden">Organization</span>
          <select aria-label="Organization" value={org ?? ""} onChange={(event) => navigate(`/orgs/${event.target.value}`)}>
            {org ? null : <option value="">Choose an organization</option>}
            {me?.orgs.map((o) => (
              <option key={o.id} value={o.id}>
                {o.name}
              </option>
            ))}
          </select>
        </label>
        {org ? (
          <label className="switch">
            <span className="visually-hidden">Project</span>
            <select aria-label="Project" value={current ?? ""} onChange={(event) => navigate(`/orgs/${org}/projects/${event.target.value}/agents`)}>
              {projects.data?.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <span className="spacer" />
        <span className="muted who">{me?.user.display_name}</span>
        <button type="button" className="secondary" disabled={out.busy} onClick={() => void out.run(async () => { await signOut(); navigate("/signin", true); })}>
          Sign out
        </button>
      </header>
      <nav aria-label="Sections" className="sections">
        {base ? <NavLink to={`${base}/agents`} label="Agents" /> : null}
        {base ? <NavLink to={`${base}/launch`} label="Launch" /> : null}
        {base ? <NavLink to={`${base}/profiles`} label="Profiles" /> : null}
        {base ? <NavLink to={`${base}/schedules`} label="Schedules" /> : null}
        {base ? <NavLink to={`${base}/integrations`} label="Integrations" /> : null}
        {org ? <NavLink to={`/orgs/${org}/machines`} label="Machines" /> : null}
        {org ? <NavLink to={`/orgs/${org}/pools`} label="Pools" /> : null}
        {org ? <NavLink to={`/orgs/${org}/skills`} label="Skills" /> : null}
        {org ? <NavLink to={`/orgs/${org}/secrets`} label="Secrets" /> : null}
        {org ? <NavLink to={`/orgs/${org}/models`} label="Models" /> : null}
        {org ? <NavLink to={`/orgs/${org}/members`} label="Members" /> : null}
        <NavLink to="/tokens" label="Tokens" />
      </nav>
      <ErrorNotice error={out.error ?? projects.error} />
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}

/** A section link that tells assistive technology (and the eye) which section is open. */
function NavLink({ to, label }: { to: string; label: string }) {
  const { path } = useLocation();
  const current = path === to || path.startsWith(to + "/");
  return (
    <Link to={to} aria-current={current ? "page" : undefined}>
      {label}
    </Link>
  );
}
