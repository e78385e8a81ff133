import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { FastifyServerOptions } from "fastify";

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * A Fastify `serverFactory` whose server starts at most `perTurn` API requests per turn of the event loop;
 * the rest wait, in arrival order, for the next turns.
 *
 * Node reads every socket that has data in one poll phase and starts each request there, through routing,
 * the hooks and authentication, up to its first wait on the database. When 200 clients send at once, that
 * is one turn of 50–120 ms (load test, embedded database), and everything else on the loop waits for it:
 * a `/healthz` probe, a stream's next frame, accepting a new connection. Deferring all but `perTurn` of
 * them to the check phase, `perTurn` per turn, lets the poll phase come round between batches. Requests
 * outside `/api/` (probes, `/metrics`) start at once. `perTurn` 0 starts every request at once.
 */
export function pacedServerFactory(perTurn: number) {
  return (handler: Handler, options: FastifyServerOptions): Server => {
    const server = createServer(perTurn > 0 ? pacedHandler(handler, perTurn) : handler);
    // Fastify sets these on the servers it creates itself; it leaves them to a factory's server.
    server.keepAliveTimeout = options.keepAliveTimeout ?? server.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout ?? server.requestTimeout;
    server.setTimeout(options.connectionTimeout ?? 0);
    if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
    return server;
  };
}

function pacedHandler(handler: Handler, perTurn: number): Handler {
  const waiting: Array<[IncomingMessage, ServerResponse]> = [];
  let scheduled = false;
  // Runs in the check phase; what it leaves waits for the next turn's, after that turn's poll phase.
  const startSome = () => {
    scheduled = false;
    for (let started = 0; started < perTurn && waiting.length > 0; started++) {
      const [request, response] = waiting.shift()!;
      handler(request, response);
    }
    if (waiting.length > 0) schedule();
  };
  const schedule = () => {
    scheduled = true;
    setImmediate(startSome);
  };
  return (request, response) => {
    if (!request.url?.startsWith("/api/")) return handler(request, response);
    waiting.push([request, response]);
    if (!scheduled) schedule();
  };
}
