/**
 * A Server-Sent Events client for tests: opens a stream with fetch and parses it into frames as the
 * bytes arrive. Comment lines (`: ok`, `: heartbeat`) are kept as their own items so tests can see
 * them; `frames()` skips them.
 */

export type SseItem =
  | { kind: "comment"; text: string }
  | { kind: "frame"; event: string; id?: string; data: string; json: any };

export type SseFrame = Extract<SseItem, { kind: "frame" }>;

export interface SseOptions {
  token?: string;
  headers?: Record<string, string>;
}

// Generous: a frame waits on a worker step, which a loaded machine can hold up for seconds.
const DEFAULT_WAIT_MS = 30_000;

export class SseStream {
  private readonly items: SseItem[] = [];
  private waiter: (() => void) | null = null;
  private buffer = "";
  private ended = false;
  private failure: unknown;
  /** Resolves when the server ends the response (or the connection fails). */
  readonly done: Promise<void>;

  private constructor(
    readonly status: number,
    readonly headers: Headers,
    private readonly abort: AbortController,
    body: ReadableStream<Uint8Array>,
  ) {
    this.done = this.pump(body);
  }

  /** Opens `url`; a non-200 answer is returned as `{status, body}` instead. */
  static async open(url: string, options: SseOptions = {}): Promise<SseStream> {
    const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
    if (options.token) headers["authorization"] = `Bearer ${options.token}`;
    const abort = new AbortController();
    const response = await fetch(url, { headers, signal: abort.signal });
    if (response.status !== 200 || !response.body) {
      throw new SseRefused(response.status, await response.text());
    }
    return new SseStream(response.status, response.headers, abort, response.body);
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.buffer += decoder.decode(chunk, { stream: true });
        this.parse();
      }
    } catch (err) {
      if (!this.abort.signal.aborted) this.failure = err;
    } finally {
      this.ended = true;
      this.notify();
    }
  }

  private parse(): void {
    for (;;) {
      const match = /\r\n\r\n|\n\n|\r\r/.exec(this.buffer);
      if (!match) break;
      const block = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const lines = block.split(/\r\n|\r|\n/);
      const data: string[] = [];
      let event = "message";
      let id: string | undefined;
      for (const line of lines) {
        if (line.startsWith(":")) {
          this.items.push({ kind: "comment", text: line.slice(1).trim() });
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") data.push(value);
        else if (field === "event") event = value;
        else if (field === "id") id = value;
      }
      if (data.length > 0) {
        const text = data.join("\n");
        this.items.push({ kind: "frame", event, ...(id !== undefined ? { id } : {}), data: text, json: parseJson(text) });
      }
    }
    this.notify();
  }

  private notify(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }

  /** The next item (frame or comment); rejects after `waitMs` or when the stream ended first. */
  async next(waitMs = DEFAULT_WAIT_MS): Promise<SseItem> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const item = this.items.shift();
      if (item) return item;
      if (this.failure) throw this.failure;
      if (this.ended) throw new Error("the stream ended");
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE item within ${waitMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** The next `count` frames, skipping comments. */
  async frames(count: number, waitMs = DEFAULT_WAIT_MS): Promise<SseFrame[]> {
    const frames: SseFrame[] = [];
    const deadline = Date.now() + waitMs;
    while (frames.length < count) {
      const item = await this.next(Math.max(1, deadline - Date.now()));
      if (item.kind === "frame") frames.push(item);
    }
    return frames;
  }

  /** Every item received so far that no `next` has taken, without waiting. */
  drain(): SseItem[] {
    return this.items.splice(0);
  }

  /** Waits `ms`, then returns what arrived meanwhile (to check that nothing did). */
  async quiet(ms: number): Promise<SseItem[]> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return this.drain();
  }

  close(): void {
    this.abort.abort();
  }
}

export class SseRefused extends Error {
  readonly json: any;

  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the stream was refused: ${status} ${body}`);
    this.json = parseJson(body);
  }
}

/** The JSON in `text`, or undefined when it is not JSON. */
function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Opens a stream expecting it to be refused, and returns the refusal. */
export async function refusedStream(url: string, options: SseOptions = {}): Promise<SseRefused> {
  try {
    const stream = await SseStream.open(url, options);
    stream.close();
  } catch (err) {
    if (err instanceof SseRefused) return err;
    throw err;
  }
  throw new Error(`${url} was not refused`);
}
