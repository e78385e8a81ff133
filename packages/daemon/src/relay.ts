import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A loopback TCP port that carries each connection to svc over a Unix socket. svc's `local` provider runs
 * a sandboxed svcd in a network namespace of its own, with nothing but its own loopback, and passes in a
 * socket that leads to svc's API; svcd and the processes it starts (transfers) keep speaking plain HTTP
 * to the origin this returns.
 */
export async function startRelay(socketPath: string): Promise<{ origin: string; server: Server }> {
  const server = createServer((client) => pipeTo(client, connect(socketPath)));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  server.unref();
  const { port } = server.address() as { port: number };
  return { origin: `http://127.0.0.1:${port}`, server };
}

/** Joins two sockets both ways; either side's end or error ends both. */
export function pipeTo(a: Socket, b: Socket): void {
  const end = () => {
    a.destroy();
    b.destroy();
  };
  a.once("error", end).once("close", end);
  b.once("error", end).once("close", end);
  a.pipe(b);
  b.pipe(a);
}
