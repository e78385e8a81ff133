import { useRouterState, type AnyRouter } from "@tanstack/react-router";

/*
 * The pages' way to the router (TanStack Router, routes in routes.tsx): `navigate` and `useLocation` take
 * plain addresses, so a page can link anywhere without importing the route tree.
 */

let current: AnyRouter | undefined;

/** Called once, by routes.tsx, with the router it made. */
export function setRouter(router: AnyRouter): void {
  current = router;
}

export function navigate(to: string, replace = false): void {
  if (!current) throw new Error("navigate before the router exists");
  void current.navigate({ href: to, replace });
}

/** The current path and query, following links, back and forward. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const location = useRouterState({ select: (state) => state.location });
  return { path: location.pathname, query: new URLSearchParams(location.searchStr) };
}
