import { useEffect, type ReactNode } from "react";
import { api, call } from "./api/client";
import { AgentView } from "./pages/agent";
import { AgentsList } from "./pages/agents";
import { SignIn, SignUp } from "./pages/auth";
import { DevicePage } from "./pages/device";
import { Launch } from "./pages/launch";
import { Home, OrgHome } from "./pages/home";
import { Machines, Members, Models, Secrets, Tokens } from "./pages/org";
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
  if ((params = match("/orgs/:org", path))) return <OrgHome org={params.org!} />;
  const pages: Record<string, (org: string) => ReactNode> = {
    machines: (org) => <Machines org={org} />,
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
        {base ? <Link to={`${base}/agents`}>Agents</Link> : null}
        {base ? <Link to={`${base}/launch`}>Launch</Link> : null}
        {org ? <Link to={`/orgs/${org}/machines`}>Machines</Link> : null}
        {org ? <Link to={`/orgs/${org}/skills`}>Skills</Link> : null}
        {org ? <Link to={`/orgs/${org}/secrets`}>Secrets</Link> : null}
        {org ? <Link to={`/orgs/${org}/models`}>Models</Link> : null}
        {org ? <Link to={`/orgs/${org}/members`}>Members</Link> : null}
        <Link to="/tokens">Tokens</Link>
      </nav>
      <ErrorNotice error={out.error ?? projects.error} />
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}
