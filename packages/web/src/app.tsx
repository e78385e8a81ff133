import { lazy, Suspense, useEffect, type ComponentType, type ReactNode } from "react";
import { createRootRoute, createRoute, createRouter, Outlet, RouterProvider } from "@tanstack/react-router";
import { AgentView } from "./pages/agent";
import { AgentsList, type AgentsSearch } from "./pages/agents";
import { SignIn, SignUp } from "./pages/auth";
import { DevicePage } from "./pages/device";
import { ConfigPage, Configs } from "./pages/configs";
import { Launch } from "./pages/launch";
import { Home, Invitations, OrgHome } from "./pages/home";
import { Integrations } from "./pages/integrations";
import { Machines } from "./pages/machines";
import { Models } from "./pages/models";
import { Memory } from "./pages/memory";
import { Members, Tokens } from "./pages/org";
import { Pools } from "./pages/pools";
import { Profiles } from "./pages/profiles";
import { Schedules } from "./pages/schedules";
import { Secrets } from "./pages/secrets";
import { Skills } from "./pages/skills";
import { navigate, setRouter } from "./router";
import { SessionProvider, useSession } from "./session";
import { Shell } from "./shell";
import { Link } from "./ui";

/*
 * The console's routes (TanStack Router, code-based): typed path parameters, and search parameters for
 * the agents list's filters and paging. Signed-in pages sit under `authed` (the session gate) and `shell`
 * (the frame with the sidebar).
 */

export function App() {
  return (
    <SessionProvider>
      <RouterProvider router={router} />
    </SessionProvider>
  );
}

const rootRoute = createRootRoute({
  component: () => (
    <>
      <PublicUrlNotice />
      <Outlet />
    </>
  ),
  notFoundComponent: () => (
    <Authed>
      <Shell>
        <h1>Not found</h1>
        <p>
          No page at this address. <Link to="/">Go to the start</Link>.
        </p>
      </Shell>
    </Authed>
  ),
});

const signIn = createRoute({ getParentRoute: () => rootRoute, path: "/signin", component: SignIn });
const signUp = createRoute({ getParentRoute: () => rootRoute, path: "/signup", component: SignUp });
const device = createRoute({ getParentRoute: () => rootRoute, path: "/device", component: DevicePage });

const authed = createRoute({
  getParentRoute: () => rootRoute,
  id: "authed",
  component: () => (
    <Authed>
      <Outlet />
    </Authed>
  ),
});
const home = createRoute({ getParentRoute: () => authed, path: "/", component: Home });
const orgHome = createRoute({ getParentRoute: () => authed, path: "/orgs/$org", component: () => <OrgHome org={orgHome.useParams().org} /> });

const shell = createRoute({
  getParentRoute: () => authed,
  id: "shell",
  component: () => (
    <Shell>
      <Outlet />
    </Shell>
  ),
});
const tokens = createRoute({ getParentRoute: () => shell, path: "/tokens", component: Tokens });
const invitations = createRoute({ getParentRoute: () => shell, path: "/invitations", component: Invitations });

// The cost pages load on their first visit, not with the console (docs/console.md, Size and speed).
const Usage = lazy(() => import("./pages/usage").then((m) => ({ default: m.Usage })));
const Budgets = lazy(() => import("./pages/budgets").then((m) => ({ default: m.Budgets })));
const WebhookEndpoints = lazy(() => import("./pages/webhooks").then((m) => ({ default: m.WebhookEndpoints })));

/** An organization page: `/orgs/$org/<path>`; a lazily loaded one says so while its code loads. */
function orgPage(path: string, Page: ComponentType<{ org: string }>) {
  const route = createRoute({
    getParentRoute: () => shell,
    path: `/orgs/$org/${path}`,
    component: () => (
      <Suspense fallback={<p className="muted">Loading the page…</p>}>
        <Page org={route.useParams().org} />
      </Suspense>
    ),
  });
  return route;
}

/** A project page: `/orgs/$org/projects/$project/<path>`. */
function projectPage(path: string, Page: (props: { org: string; project: string }) => ReactNode) {
  const route = createRoute({
    getParentRoute: () => shell,
    path: `/orgs/$org/projects/$project/${path}`,
    component: () => {
      const { org, project } = route.useParams();
      return <Page org={org} project={project} />;
    },
  });
  return route;
}

const ACTIVITY_FILTERS = new Set(["running", "retrying", "waiting", "paused", "idle", "failed", "cancelled"]);

export const agentsRoute = createRoute({
  getParentRoute: () => shell,
  path: "/orgs/$org/projects/$project/agents",
  validateSearch: (search: Record<string, unknown>): AgentsSearch => ({
    ...(typeof search["q"] === "string" && search["q"] ? { q: search["q"] } : {}),
    ...(typeof search["activity"] === "string" && ACTIVITY_FILTERS.has(search["activity"]) ? { activity: search["activity"] as AgentsSearch["activity"] } : {}),
    ...(search["archived"] === true || search["archived"] === "true" ? { archived: true } : {}),
    ...(typeof search["parent"] === "string" && /^agt_[A-Za-z0-9]+$/.test(search["parent"]) ? { parent: search["parent"] } : {}),
    ...(typeof search["cursor"] === "string" && search["cursor"] ? { cursor: search["cursor"] } : {}),
  }),
  component: () => {
    const { org, project } = agentsRoute.useParams();
    return <AgentsList org={org} project={project} search={agentsRoute.useSearch()} />;
  },
});

const agent = createRoute({
  getParentRoute: () => shell,
  path: "/orgs/$org/projects/$project/agents/$agent",
  component: () => {
    const { org, project, agent: id } = agent.useParams();
    // Keyed by agent: another agent's page starts fresh.
    return <AgentView key={id} org={org} project={project} agent={id} />;
  },
});

const config = createRoute({
  getParentRoute: () => shell,
  path: "/orgs/$org/projects/$project/configs/$config",
  component: () => {
    const { org, project, config: id } = config.useParams();
    return <ConfigPage key={id} org={org} project={project} config={id} />;
  },
});

const routeTree = rootRoute.addChildren([
  signIn,
  signUp,
  device,
  authed.addChildren([
    home,
    orgHome,
    shell.addChildren([
      tokens,
      invitations,
      orgPage("machines", Machines),
      orgPage("pools", Pools),
      orgPage("secrets", Secrets),
      orgPage("skills", Skills),
      orgPage("models", Models),
      orgPage("members", Members),
      orgPage("usage", Usage),
      orgPage("budgets", Budgets),
      orgPage("webhooks", WebhookEndpoints),
      agentsRoute,
      agent,
      projectPage("launch", Launch),
      projectPage("integrations", Integrations),
      projectPage("profiles", Profiles),
      projectPage("configs", Configs),
      config,
      projectPage("memory", Memory),
      projectPage("schedules", Schedules),
    ]),
  ]),
]);

export const router = createRouter({ routeTree, defaultPreload: false, scrollRestoration: true });
setRouter(router);

declare module "@tanstack/react-router" {
  interface Register {
    router: typeof router;
  }
}

/** Signed-in pages: a sign-in redirect (back here after) when signed out. */
function Authed({ children }: { children: ReactNode }) {
  const { me, signedOut } = useSession();
  if (me === undefined) return <p className="loading" role="status">Loading…</p>;
  // After signing out, sign-in leads nowhere back: the same address the sign-out button goes to, so where the
  // page ends does not depend on which of the two navigations comes last.
  if (me === null) return <Redirect to={signedOut ? "/signin" : `/signin?next=${encodeURIComponent(location.pathname + location.search)}`} />;
  return <>{children}</>;
}

export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

/**
 * svc accepts sign-ins and changes only from its public address (SVC_PUBLIC_URL, which the server writes
 * into the page): opened elsewhere, the console says so at once rather than at the first refused change.
 */
function PublicUrlNotice() {
  const publicUrl = document.querySelector<HTMLMetaElement>('meta[name="svc-public-url"]')?.content;
  if (!publicUrl) return null;
  let expected: string;
  try {
    expected = new URL(publicUrl).origin;
  } catch {
    return null;
  }
  if (expected === location.origin) return null;
  const there = `${expected}${location.pathname}${location.search}`;
  return (
    <p className="m-0 border-b-2 border-danger bg-panel px-4 py-2 text-danger" id="public-url-notice">
      This page was opened at {location.origin}, but svc accepts sign-ins and changes only from its public address: <a href={there}>open {there}</a> instead.
    </p>
  );
}
