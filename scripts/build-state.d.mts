/** The workspaces (as listed in the root package.json) whose build is missing or older than its sources. */
export function staleWorkspaces(root: string): string[];
