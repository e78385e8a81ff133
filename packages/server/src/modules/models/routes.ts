import type { HttpApp } from "../../platform/http/app.js";
import { configuredModelRoutes } from "./configured-routes.js";
import { modelGrantRoutes } from "./grants-routes.js";
import { providerRoutes } from "./providers-routes.js";
import type { ModelsService } from "./service.js";

/** Every models route: provider configs and their catalog, configured models, project model grants. */
export function modelRoutes(app: HttpApp, deps: { models: ModelsService }) {
  providerRoutes(app, deps);
  configuredModelRoutes(app, deps);
  modelGrantRoutes(app, deps);
}
