import { parseArgs } from "node:util";
import { startFakeProvider } from "./server.js";

const USAGE = `usage: svc fake-provider [--port 8787] [--host 127.0.0.1] [--verbose]

Runs a deterministic model provider speaking OpenAI Responses, OpenAI Chat Completions and Anthropic
Messages, for offline quickstarts and tests. It echoes the last user message ("echo: <text>"), calls a
tool when asked "call tool <name> <json object>", and after a tool result answers
"tool <name> said: <result>". Any credential and any model name are accepted.`;

export interface FakeProviderCliIo {
  /** Stops the server when aborted (tests); SIGTERM and SIGINT always do. */
  signal?: AbortSignal;
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** `svc fake-provider`: serves until SIGTERM/SIGINT, then resolves with the exit code. */
export async function runFakeProvider(argv: string[], io: FakeProviderCliIo = {}): Promise<number> {
  const out = io.out ?? ((line: string) => console.log(line));
  const err = io.err ?? ((line: string) => console.error(line));
  let values: { port?: string | undefined; host?: string | undefined; verbose?: boolean | undefined; help?: boolean | undefined };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        port: { type: "string", short: "p" },
        host: { type: "string" },
        verbose: { type: "boolean", short: "v" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (error) {
    err(`svc fake-provider: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    out(USAGE);
    return 0;
  }
  const port = values.port === undefined ? 8787 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    err(`svc fake-provider: --port must be an integer from 0 to 65535\n\n${USAGE}`);
    return 2;
  }

  const provider = await startFakeProvider({
    port,
    host: values.host ?? "127.0.0.1",
    ...(values.verbose ? { onRequest: (request, status) => out(`${request.method} ${request.path} -> ${status}`) } : {}),
  });
  out(`svc fake provider listening on ${provider.url}`);
  out(`  openai-responses         base_url ${provider.baseUrl}  (POST /v1/responses)`);
  out(`  openai-chat-completions  base_url ${provider.baseUrl}  (POST /v1/chat/completions)`);
  out(`  anthropic-messages       base_url ${provider.baseUrl}  (POST /v1/messages)`);
  out(`Any credential and model name are accepted. Stop with Ctrl-C.`);

  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGTERM", stop);
      process.off("SIGINT", stop);
      io.signal?.removeEventListener("abort", stop);
      resolve();
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    if (io.signal?.aborted) stop();
    else io.signal?.addEventListener("abort", stop, { once: true });
  });
  await provider.close();
  return 0;
}
