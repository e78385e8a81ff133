import { chmodSync, existsSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Socket } from "node:net";
import { join } from "node:path";

/*
 * A running `svc serve` owns the embedded data directory, so `svc backup` asks it for the dump over a
 * Unix socket inside that directory (mode 0600 like the rest of it: only the owner can connect). One
 * request per connection: the client writes `dump\n`; the server answers one JSON header line, then
 * the dump.
 */

const REQUEST = "dump\n";
// A large database takes a while to dump; past this the client gives up rather than wait forever.
const DUMP_TIMEOUT_MS = 30 * 60_000;

export const backupSocketPath = (dataDir: string) => join(dataDir, "svc.sock");

/** Serves dumps of `dump` on the data directory's socket; returns the stop. */
export async function serveBackups(dataDir: string, dump: () => Promise<string>, onError: (err: unknown) => void): Promise<() => Promise<void>> {
  const path = backupSocketPath(dataDir);
  // Left behind by a process that died; the data-dir lock says no live svc owns it.
  if (existsSync(path)) unlinkSync(path);
  const server = createServer((socket) => answer(socket, dump, onError));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen({ path, readableAll: false, writableAll: false }, resolve);
  });
  chmodSync(path, 0o600);
  return () => new Promise<void>((resolve) => server.close(() => resolve()));
}

function answer(socket: Socket, dump: () => Promise<string>, onError: (err: unknown) => void): void {
  let received = "";
  socket.setEncoding("utf8");
  socket.on("error", () => socket.destroy());
  socket.on("data", (chunk: string) => {
    received += chunk;
    if (received.length < REQUEST.length) return;
    socket.removeAllListeners("data");
    if (received !== REQUEST) return void socket.end(`${JSON.stringify({ ok: false, error: "unknown request" })}\n`);
    dump().then(
      (sql) => socket.end(`${JSON.stringify({ ok: true, bytes: Buffer.byteLength(sql) })}\n${sql}`),
      (err: unknown) => {
        onError(err);
        socket.end(`${JSON.stringify({ ok: false, error: "the dump failed; see the server's log" })}\n`);
      },
    );
  });
}

/** Asks the svc process that owns `dataDir` for a dump. */
export function requestDump(dataDir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(backupSocketPath(dataDir));
    const chunks: Buffer[] = [];
    socket.setTimeout(DUMP_TIMEOUT_MS, () => socket.destroy(new Error("the running svc did not answer the backup request in time")));
    socket.on("connect", () => socket.write(REQUEST));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      try {
        resolve(parseAnswer(Buffer.concat(chunks).toString("utf8")));
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}

function parseAnswer(text: string): string {
  const newline = text.indexOf("\n");
  if (newline < 0) throw new Error("the running svc closed the connection without answering");
  const header = JSON.parse(text.slice(0, newline)) as { ok: boolean; bytes?: number; error?: string };
  const sql = text.slice(newline + 1);
  if (!header.ok) throw new Error(`the running svc refused the backup: ${header.error}`);
  if (Buffer.byteLength(sql) !== header.bytes) throw new Error("the backup was cut short");
  return sql;
}
