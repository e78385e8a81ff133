import { useEffect, useState, type ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { useParams, useRouterState } from "@tanstack/react-router";
import { DropdownMenu, Popover } from "radix-ui";
import {
  Bell, Bot, Boxes, Brain, ChartColumn, ChevronRight, Cpu, Database, FileCode, KeyRound, LogOut, Menu, Monitor, Moon, Network, Plug, Rocket, Search, Server, Sun, Timer, Users, Wallet, Webhook, Wrench, X,
  type LucideIcon,
} from "lucide-react";
import { api, call } from "./api/client";
import { keys } from "./query";
import { navigate } from "./router";
import { Palette } from "./palette";
import { ProjectActivity, useProjectLive } from "./project-activity";
import { useSession } from "./session";
import { useTheme, type Theme } from "./theme";
import { ErrorNotice, Link, useAction } from "./ui";
import { useProjects } from "./widgets";

/*
 * The frame of every signed-in page: a sidebar grouping the pages, breadcrumbs with the organization and
 * project, what waits for the signed-in person, the command palette (Ctrl/⌘-K), the theme and sign out.
 */

export interface NavItem {
  label: string;
  to: string;
  icon: LucideIcon;
  group: string;
}

/** The pages of the sidebar (and the palette), for the organization and project open now. */
export function navItems(org: string | undefined, project: string | undefined): NavItem[] {
  const items: NavItem[] = [];
  const base = org && project ? `/orgs/${org}/projects/${project}` : undefined;
  if (base) {
    items.push({ group: "Agents", label: "Agents", to: `${base}/agents`, icon: Bot }, { group: "Agents", label: "Launch", to: `${base}/launch`, icon: Rocket });
    items.push(
      { group: "Build", label: "Profiles", to: `${base}/profiles`, icon: Wrench },
      { group: "Build", label: "Configs", to: `${base}/configs`, icon: FileCode },
      { group: "Build", label: "Memory", to: `${base}/memory`, icon: Database },
    );
  }
  if (org) items.push({ group: "Build", label: "Skills", to: `/orgs/${org}/skills`, icon: Brain });
  if (org) {
    items.push({ group: "Connect", label: "Machines", to: `/orgs/${org}/machines`, icon: Server }, { group: "Connect", label: "Pools", to: `/orgs/${org}/pools`, icon: Boxes });
  }
  if (base) {
    items.push({ group: "Connect", label: "Integrations", to: `${base}/integrations`, icon: Plug }, { group: "Connect", label: "Schedules", to: `${base}/schedules`, icon: Timer });
  }
  if (org) {
    items.push(
      { group: "Administer", label: "Models", to: `/orgs/${org}/models`, icon: Cpu },
      { group: "Administer", label: "Secrets", to: `/orgs/${org}/secrets`, icon: KeyRound },
      { group: "Administer", label: "Members", to: `/orgs/${org}/members`, icon: Users },
      { group: "Administer", label: "Usage", to: `/orgs/${org}/usage`, icon: ChartColumn },
      { group: "Administer", label: "Budgets", to: `/orgs/${org}/budgets`, icon: Wallet },
      { group: "Administer", label: "Webhooks", to: `/orgs/${org}/webhooks`, icon: Webhook },
    );
  }
  items.push({ group: "Administer", label: "Tokens", to: "/tokens", icon: Network });
  return items;
}

const GROUPS = ["Agents", "Build", "Connect", "Administer"];

export function Shell({ children }: { children: ReactNode }) {
  const params = useParams({ strict: false }) as { org?: string; project?: string; agent?: string };
  const { org, project } = params;
  const { me, signOut } = useSession();
  const projects = useProjects(org);
  // Organization pages have no project in their address: keep showing the one last opened in this tab.
  const remembered = org ? sessionStorage.getItem(`svc:project:${org}`) : null;
  const current = project ?? projects.data?.find((p) => p.id === remembered)?.id ?? projects.data?.[0]?.id;
  useEffect(() => {
    if (org && project) sessionStorage.setItem(`svc:project:${org}`, project);
  }, [org, project]);
  const out = useAction();
  const [menuOpen, setMenuOpen] = useState(false);
  const path = useRouterState({ select: (s) => s.location.pathname });
  // A link followed on a phone closes the menu.
  useEffect(() => setMenuOpen(false), [path]);
  const items = navItems(org, current);
  const orgName = me?.orgs.find((o) => o.id === org)?.name;
  const projectName = projects.data?.find((p) => p.id === current)?.name;
  const page = items.filter((i) => path === i.to || path.startsWith(i.to + "/")).sort((a, b) => b.to.length - a.to.length)[0];
  // On an agent's page the last crumb names the agent, from the query its page reads (no second request).
  const agent = useQuery({
    queryKey: keys.agent(org ?? "", project ?? "", params.agent ?? "", "detail"),
    enabled: org !== undefined && project !== undefined && params.agent !== undefined,
    queryFn: () => call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents/{agentID}", { params: { path: { orgID: org!, projectID: project!, agentID: params.agent! } } })),
  });
  const agentCrumb = params.agent ? agent.data?.agent.name || params.agent : undefined;

  return (
    <ProjectActivity org={org} project={current}>
    <div className="min-h-screen md:grid md:grid-cols-[15rem_minmax(0,1fr)]">
      <a className="skip" href="#main">
        Skip to content
      </a>
      {/* The column carries the sidebar's background and border, so they run the whole height of a long
          page; the sidebar inside it stays in view (sticky) and scrolls by itself when taller than the screen. */}
      <div className="md:border-r md:border-line md:bg-panel">
      <aside
        id="sidebar"
        className={`${menuOpen ? "block" : "hidden"} border-b border-line bg-panel md:sticky md:top-0 md:block md:max-h-screen md:overflow-y-auto md:border-b-0`}
      >
        <div className="hidden items-center gap-2 px-4 py-3 md:flex">
          <Link to="/" className="brand">
            svc
          </Link>
        </div>
        <div className="flex flex-col gap-2 px-3 pb-2">
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
        </div>
        <nav aria-label="Sections" className="px-2 pb-4">
          {GROUPS.map((group) => {
            const inGroup = items.filter((i) => i.group === group);
            if (inGroup.length === 0) return null;
            return (
              <div key={group} className="mt-3">
                <p id={`nav-${group}`} className="m-0 px-2 text-xs font-semibold uppercase tracking-wide text-muted">
                  {group}
                </p>
                <ul aria-labelledby={`nav-${group}`} className="m-0 list-none p-0">
                  {inGroup.map((item) => (
                    <li key={item.to}>
                      <NavLink item={item} current={page?.to === item.to} />
                    </li>
                  ))}
                </ul>
              </div>
            );
          })}
        </nav>
      </aside>
      </div>
      <div className="min-w-0">
        <header className="flex flex-wrap items-center gap-2 border-b border-line px-3 py-2">
          <button
            type="button"
            className="secondary small-button inline-flex items-center gap-1 md:hidden"
            aria-expanded={menuOpen}
            aria-controls="sidebar"
            onClick={() => setMenuOpen((open) => !open)}
          >
            {menuOpen ? <X aria-hidden size={16} /> : <Menu aria-hidden size={16} />} Menu
          </button>
          <Link to="/" className="brand flex-1 sm:flex-none md:hidden">
            svc
          </Link>
          <nav aria-label="Breadcrumbs" className="order-last min-w-0 basis-full sm:order-none sm:flex-1 sm:basis-auto">
            <ol className="m-0 flex list-none flex-wrap items-center gap-1 p-0 text-sm">
              {orgName ? (
                <li className="flex items-center gap-1">
                  <Link to={`/orgs/${org}`}>{orgName}</Link>
                </li>
              ) : null}
              {orgName && projectName && current ? (
                <li className="flex items-center gap-1">
                  <ChevronRight aria-hidden size={14} className="text-muted" />
                  <Link to={`/orgs/${org}/projects/${current}/agents`}>{projectName}</Link>
                </li>
              ) : null}
              {page && agentCrumb ? (
                <>
                  <li className="flex items-center gap-1">
                    <ChevronRight aria-hidden size={14} className="text-muted" />
                    <Link to={page.to}>{page.label}</Link>
                  </li>
                  <li className="flex min-w-0 items-center gap-1">
                    <ChevronRight aria-hidden size={14} className="text-muted" />
                    <span aria-current="page" className="truncate">{agentCrumb}</span>
                  </li>
                </>
              ) : page ? (
                <li className="flex items-center gap-1">
                  <ChevronRight aria-hidden size={14} className="text-muted" />
                  <span aria-current="page">{page.label}</span>
                </li>
              ) : null}
            </ol>
          </nav>
          {org && current ? <WaitingForYou org={org} project={current} /> : null}
          <Palette org={org} project={current} items={items} trigger={
            <button type="button" className="secondary small-button inline-flex items-center gap-1" aria-keyshortcuts="Control+K Meta+K">
              <Search aria-hidden size={16} /> <span className="hidden sm:inline">Search</span> <kbd className="hidden text-xs text-muted sm:inline">Ctrl K</kbd>
            </button>
          } />
          <ThemeMenu />
          <span className="muted who hidden sm:inline">{me?.user.display_name}</span>
          <button
            type="button"
            className="secondary small-button inline-flex items-center gap-1"
            disabled={out.busy}
            onClick={() => void out.run(async () => {
              await signOut();
              navigate("/signin", true);
            })}
          >
            <LogOut aria-hidden size={16} /> Sign out
          </button>
        </header>
        <InvitationsNotice />
        <ErrorNotice error={out.error ?? projects.error} />
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </div>
    </div>
    </ProjectActivity>
  );
}

function NavLink({ item, current }: { item: NavItem; current: boolean }) {
  const Icon = item.icon;
  return (
    <Link
      to={item.to}
      aria-current={current ? "page" : undefined}
      className={`flex items-center gap-2 rounded-md px-2 py-1.5 no-underline ${current ? "bg-bg font-semibold text-fg shadow-sm" : "text-fg hover:bg-bg"}`}
    >
      <Icon aria-hidden size={16} className="text-muted" />
      {item.label}
    </Link>
  );
}

/** The agents of the project that wait for a person (open approvals and questions), each linked. */
function WaitingForYou({ org, project }: { org: string; project: string }) {
  const live = useProjectLive();
  const waiting = useQuery({
    queryKey: keys.agents(org, project, { waiting: true }),
    // Kept current by the project's activity stream; read every 10 s only while the stream is down.
    refetchInterval: live ? false : 10_000,
    queryFn: async () =>
      (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path: { orgID: org, projectID: project }, query: { activity: "waiting", limit: 100 } } }))).data,
  });
  const agents = waiting.data ?? [];
  const count = agents.reduce((sum, a) => sum + (a.activity.open_interactions ?? 1), 0);
  // The name starts with the visible count (WCAG 2.5.3, label in name).
  const label = `${count} waiting for you`;
  return (
    <Popover.Root>
      <Popover.Trigger asChild>
        <button type="button" className={`small-button inline-flex items-center gap-1 ${count > 0 ? "primary" : "secondary"}`} aria-label={label}>
          <Bell aria-hidden size={16} />
          <span>{count}</span>
        </button>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content align="end" sideOffset={6} className="z-50 w-[min(22rem,calc(100vw-1rem))] rounded-lg border border-line bg-bg p-3 shadow-lg">
          <h2 className="m-0 mb-2 text-base">{count === 0 ? "Nothing waits for you" : label}</h2>
          {agents.length === 0 ? (
            <p className="m-0 text-sm text-muted">No approvals or questions are open in this project.</p>
          ) : (
            <ul className="m-0 list-none p-0" aria-label="Waiting for you">
              {agents.map((a) => (
                <li key={a.id} className="border-b border-line py-1.5 last:border-b-0">
                  <Link to={`/orgs/${org}/projects/${project}/agents/${a.id}`}>{a.name || a.id}</Link>
                  <span className="block text-sm text-muted">{a.activity.detail}</span>
                </li>
              ))}
            </ul>
          )}
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}

const THEMES: Array<{ value: Theme; label: string; icon: LucideIcon }> = [
  { value: "light", label: "Light", icon: Sun },
  { value: "dark", label: "Dark", icon: Moon },
  { value: "system", label: "System", icon: Monitor },
];

function ThemeMenu() {
  const { theme, setTheme } = useTheme();
  const Current = THEMES.find((t) => t.value === theme)!.icon;
  return (
    <DropdownMenu.Root>
      <DropdownMenu.Trigger asChild>
        <button type="button" className="secondary small-button inline-flex items-center" aria-label={`Theme: ${theme}`}>
          <Current aria-hidden size={16} />
        </button>
      </DropdownMenu.Trigger>
      <DropdownMenu.Portal>
        <DropdownMenu.Content align="end" sideOffset={6} className="z-50 min-w-40 rounded-lg border border-line bg-bg p-1 shadow-lg">
          <DropdownMenu.RadioGroup value={theme} onValueChange={(value) => setTheme(value as Theme)}>
            {THEMES.map((t) => (
              <DropdownMenu.RadioItem
                key={t.value}
                value={t.value}
                className="flex cursor-pointer items-center gap-2 rounded px-2 py-1.5 outline-none data-[highlighted]:bg-panel data-[state=checked]:font-semibold"
              >
                <t.icon aria-hidden size={16} /> {t.label}
              </DropdownMenu.RadioItem>
            ))}
          </DropdownMenu.RadioGroup>
        </DropdownMenu.Content>
      </DropdownMenu.Portal>
    </DropdownMenu.Root>
  );
}

/** Pending invitations of the signed-in person, offered on every page until answered. */
function InvitationsNotice() {
  const invitations = useQuery({
    queryKey: keys.invitations(),
    queryFn: async () => (await call(api.GET("/api/v1/invitations", { params: { query: { limit: 100 } } }))).data,
  });
  const count = invitations.data?.length ?? 0;
  if (count === 0) return null;
  return (
    <p className="m-0 border-b border-line bg-panel px-4 py-2">
      {count === 1 ? `${invitations.data![0]!.org_name} invited you to join.` : `You have ${count} invitations to organizations.`}{" "}
      <Link to="/invitations">Review invitations</Link>
    </p>
  );
}
