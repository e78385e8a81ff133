import type { HttpApp } from "../../platform/http/app.js";
import { errorResponses } from "../../platform/http/schemas.js";
import { TAG } from "../agent-configs/schemas.js";
import { ToolCatalog } from "./schemas.js";
import { toolCatalogView } from "./views.js";

export function toolCatalogRoutes(app: HttpApp) {
  app.get(
    "/tool-catalog",
    {
      schema: {
        tags: [TAG],
        operationId: "getToolCatalog",
        summary: "Get the built-in tool catalog",
        description:
          "The built-in tools an agent config may name, with their default permission, the modes they accept and whether " +
          "they touch a machine (the tools `machine_tools.permission` covers), and the permission defaults of custom and " +
          "MCP tools. Open to any authenticated caller.",
        response: { 200: ToolCatalog, ...errorResponses() },
      },
    },
    async () => toolCatalogView,
  );
}
