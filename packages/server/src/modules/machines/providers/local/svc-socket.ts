import { rmSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";

/** The longest Unix socket path Linux takes (sun_path is 108 bytes with its terminating zero). */
const MAX_SOCKET_PATH = 107;

export interface SvcSocket {
  path: string;
  close(): Promise<void>;
}

/**
 * A Unix socket in a sandboxed machine's directory that leads to svc's API at `url`: the sandbox has no
 * network of its own, so this socket is the one way out of it, and it reaches only svc (svcd relays its
 * HTTP to it; daemon/src/relay.ts). Bytes are carried as they are, so `url` must be plain http.
 */
export async function startSvcSocket(path: string, url: string): Promise<SvcSocket> {
  const target = new URL(url);
  if (target.protocol !== "http:") throw new Error(`sandboxed local machines reach svc over plain http on this host; SVC_LOCAL_MACHINE_URL is ${target.origin}`);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) throw new Error(`the machine's socket path is longer than ${MAX_SOCKET_PATH} bytes (${path}); choose a shorter SVC_DATA_DIR`);
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = Number(target.port || 80);
  const open = new Set<Socket>();
  const server = createServer((inside) => {
    const outside = connect(port, host);
    for (const socket of [inside, outside]) {
      open.add(socket);
      socket.once("close", () => open.delete(socket));
      socket.once("error", () => {
        inside.destroy();
        outside.destroy();
      });
      socket.once("close", () => (socket === inside ? outside : inside).end());
    }
    inside.pipe(outside);
    outside.pipe(inside);
  });
  rmSync(path, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => resolve());
  });
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
