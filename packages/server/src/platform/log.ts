import pino from "pino";
import pretty from "pino-pretty";
import type { LogFormat } from "../config.js";

/**
 * The logger every process role uses. Errors are logged by kind, code and message only: a failed query's
 * message carries its parameters (message content, tokens) and a constraint error's detail the values it
 * refused, and none of that may reach a log (issue 9, F9). `pretty` writes the same lines as coloured
 * text for a person at a terminal (docs/operations.md, "Logs"); `json` is for log collectors.
 */
export function createLogger(level: string, format: LogFormat = "json"): pino.Logger {
  const options = { level, serializers: { err: loggableError, error: loggableError } };
  if (format === "json") return pino(options);
  // In this thread, synchronously: a transport's worker thread would lose the last lines of a crash.
  return pino(options, pretty({ sync: true, colorize: process.stdout.isTTY === true, ignore: "pid,hostname", translateTime: "SYS:HH:MM:ss.l" }));
}

interface LoggedError {
  type: string;
  message: string;
  code?: string;
  stack?: string;
  cause?: LoggedError;
}

/** An error as it may be logged: the message up to any parameter list, no detail, frames kept. */
export function loggableError(value: unknown, depth = 0): LoggedError | unknown {
  if (!(value instanceof Error)) return value;
  const err = value as Error & { code?: unknown };
  const message = withoutParameters(err.message);
  const frames = err.stack?.split("\n").filter((line) => line.trimStart().startsWith("at ")) ?? [];
  return {
    type: err.name,
    message,
    ...(typeof err.code === "string" ? { code: err.code } : {}),
    stack: [`${err.name}: ${message}`, ...frames].join("\n"),
    ...(err.cause instanceof Error && depth < 3 ? { cause: loggableError(err.cause, depth + 1) as LoggedError } : {}),
  };
}

/** drizzle writes "Failed query: <sql>\nparams: <values>"; the SQL is ours, the values are not. */
function withoutParameters(message: string): string {
  const at = message.indexOf("\nparams:");
  return at === -1 ? message : message.slice(0, at);
}
