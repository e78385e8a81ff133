import { useEffect, useState, type ReactElement } from "react";
import { useQuery } from "@tanstack/react-query";
import { Command } from "cmdk";
import { Dialog } from "radix-ui";
import { Bot, LogOut, Monitor, Moon, Rocket, Sun } from "lucide-react";
import { api, call, nameContains } from "./api/client";
import { keys } from "./query";
import { navigate } from "./router";
import { useSession } from "./session";
import type { NavItem } from "./shell";
import { useTheme } from "./theme";

/*
 * The command palette (cmdk): open an agent, a page or an action by typing. Ctrl-K (⌘K) opens it from
 * anywhere; arrows move, Enter runs, Escape closes and gives the focus back.
 */

export function Palette(props: { org: string | undefined; project: string | undefined; items: NavItem[]; trigger: ReactElement }) {
  const [open, setOpen] = useState(false);
  const [search, setSearch] = useState("");
  const { signOut } = useSession();
  const { setTheme } = useTheme();
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.key.toLowerCase() === "k" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        setOpen((was) => !was);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  const { org, project } = props;
  // Agents by name, as the list's name filter matches them (a glob, case-insensitive).
  const agents = useQuery({
    queryKey: keys.agents(org ?? "", project ?? "", { palette: search.trim() }),
    enabled: open && org !== undefined && project !== undefined,
    queryFn: async () => {
      const name = nameContains(search);
      return (await call(api.GET("/api/v1/orgs/{orgID}/projects/{projectID}/agents", { params: { path: { orgID: org!, projectID: project! }, query: { limit: 8, ...(name ? { name } : {}) } } }))).data;
    },
  });
  const go = (to: string) => {
    setOpen(false);
    navigate(to);
  };
  const run = (action: () => void) => {
    setOpen(false);
    action();
  };
  const itemClass = "flex cursor-pointer items-center gap-2 rounded px-2 py-2 aria-selected:bg-panel data-[selected=true]:bg-panel";
  return (
    <Dialog.Root open={open} onOpenChange={setOpen}>
      <Dialog.Trigger asChild>{props.trigger}</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="fixed inset-0 z-40 bg-black/50" />
        <Dialog.Content
          aria-describedby={undefined}
          className="fixed left-1/2 top-[12vh] z-50 w-[min(36rem,calc(100vw-1rem))] -translate-x-1/2 overflow-hidden rounded-xl border border-line bg-bg shadow-2xl"
        >
          <Dialog.Title className="visually-hidden">Command palette</Dialog.Title>
          <Command label="Search pages, agents and actions" shouldFilter={true} loop>
            <Command.Input
              value={search}
              onValueChange={setSearch}
              placeholder="Type a page, an agent or an action…"
              className="w-full rounded-none border-0 border-b border-line px-4 py-3 text-base"
            />
            <Command.List className="max-h-[60vh] overflow-y-auto p-2">
              <Command.Empty className="px-2 py-3 text-muted">Nothing matches. Try a page name such as "Secrets".</Command.Empty>
              {agents.data && agents.data.length > 0 ? (
                <Command.Group heading="Agents" className="text-sm [&_[cmdk-group-heading]]:px-2 [&_[cmdk-group-heading]]:text-xs [&_[cmdk-group-heading]]:text-muted">
                  {agents.data.map((a) => (
                    <Command.Item key={a.id} value={`agent ${a.name} ${a.id}`} keywords={[a.name]} onSelect={() => go(`/orgs/${org}/projects/${project}/agents/${a.id}`)} className={itemClass}>
                      <Bot aria-hidden size={16} /> {a.name || a.id}
                      <span className="ml-auto text-xs text-muted">{a.activity.status}</span>
                    </Command.Item>
                  ))}
                </Command.Group>
              ) : null}
              <Command.Group heading="Pages" className="text-sm [&_[cmdk-group-heading]]:px-2 [&_[cmdk-group-heading]]:text-xs [&_[cmdk-group-heading]]:text-muted">
                {props.items.map((item) => (
                  <Command.Item key={item.to} value={`page ${item.label} ${item.group}`} onSelect={() => go(item.to)} className={itemClass}>
                    <item.icon aria-hidden size={16} /> {item.label}
                    <span className="ml-auto text-xs text-muted">{item.group}</span>
                  </Command.Item>
                ))}
              </Command.Group>
              <Command.Group heading="Actions" className="text-sm [&_[cmdk-group-heading]]:px-2 [&_[cmdk-group-heading]]:text-xs [&_[cmdk-group-heading]]:text-muted">
                {org && project ? (
                  <Command.Item value="action launch an agent new" onSelect={() => go(`/orgs/${org}/projects/${project}/launch`)} className={itemClass}>
                    <Rocket aria-hidden size={16} /> Launch an agent
                  </Command.Item>
                ) : null}
                <Command.Item value="action light theme" onSelect={() => run(() => setTheme("light"))} className={itemClass}>
                  <Sun aria-hidden size={16} /> Use the light theme
                </Command.Item>
                <Command.Item value="action dark theme" onSelect={() => run(() => setTheme("dark"))} className={itemClass}>
                  <Moon aria-hidden size={16} /> Use the dark theme
                </Command.Item>
                <Command.Item value="action system theme" onSelect={() => run(() => setTheme("system"))} className={itemClass}>
                  <Monitor aria-hidden size={16} /> Follow the system theme
                </Command.Item>
                <Command.Item value="action sign out" onSelect={() => run(() => void signOut().then(() => navigate("/signin", true)))} className={itemClass}>
                  <LogOut aria-hidden size={16} /> Sign out
                </Command.Item>
              </Command.Group>
            </Command.List>
          </Command>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
