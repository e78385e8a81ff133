import type { ServerResponse } from "node:http";

/** One SSE frame. Data spanning several lines becomes several `data:` lines, as the format requires. */
export function sseFrame(event: string, data: string, id?: string): string {
  let frame = id === undefined ? "" : `id: ${id}\n`;
  frame += `event: ${event}\n`;
  for (const line of data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/** Starts an SSE response: no caching, and no buffering by a proxy in front (nginx honours x-accel-buffering). */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
}
