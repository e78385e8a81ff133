/**
 * The registry snapshot svc ships with (docs/mcp.md): a few well-known remote MCP servers, written in the
 * official registry's own `GET /v0.1/servers` format and read by the same parser as a synced page, so
 * `GET /mcp-servers` answers on a machine that never reaches a registry. The first sync replaces it.
 * Only public facts: names, what the service is, endpoint URLs.
 */
const OFFICIAL = "io.modelcontextprotocol.registry/official";
const AS_OF = "2026-11-27T00:00:00Z";

function entry(name: string, title: string, description: string, url: string, websiteUrl: string) {
  return {
    server: { name, title, description, version: "1.0.0", websiteUrl, remotes: [{ type: "streamable-http", url }] },
    _meta: { [OFFICIAL]: { status: "active", isLatest: true, publishedAt: AS_OF, updatedAt: AS_OF } },
  };
}

export const SHIPPED_REGISTRY_PAGE: unknown = {
  servers: [
    entry("ai.exa/exa", "Exa", "Web search and page contents from Exa.", "https://mcp.exa.ai/mcp", "https://exa.ai"),
    entry("app.linear/linear", "Linear", "Find, create and update Linear issues, projects and comments.", "https://mcp.linear.app/mcp", "https://linear.app"),
    entry("com.figma.mcp/mcp", "Figma", "Design context from Figma files for code generation.", "https://mcp.figma.com/mcp", "https://www.figma.com"),
    entry("com.notion/mcp", "Notion", "Search, read and edit Notion pages and databases.", "https://mcp.notion.com/mcp", "https://www.notion.so"),
    entry("com.stripe/mcp", "Stripe", "Stripe payments, customers and the Stripe documentation.", "https://mcp.stripe.com", "https://stripe.com"),
    entry("com.supabase/mcp", "Supabase", "Manage Supabase projects, databases and edge functions.", "https://mcp.supabase.com/mcp", "https://supabase.com"),
    entry("com.vercel/vercel-mcp", "Vercel", "Vercel projects, deployments and their logs.", "https://mcp.vercel.com", "https://vercel.com"),
    entry(
      "io.github.github/github-mcp-server",
      "GitHub",
      "GitHub repositories, issues, pull requests and workflows.",
      "https://api.githubcopilot.com/mcp/",
      "https://github.com/github/github-mcp-server",
    ),
  ],
  metadata: { count: 8 },
};
