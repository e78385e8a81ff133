/** One Server-Sent Events message (WHATWG HTML, "Parsing an event stream"); comments are dropped. */
export interface SseMessage {
  event: string;
  id: string | undefined;
  data: string;
}

/** Turns a byte stream into SSE messages, as they complete. */
export async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage, void, undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let message = empty();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      // A trailing "\r" may be the first half of "\r\n": keep it until the next chunk says.
      const lines = buffer.split(/\r\n|\r(?!$)|\n/);
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        if (line === "") {
          if (message.data !== undefined) yield { event: message.event ?? "message", id: message.id, data: message.data };
          message = empty();
        } else {
          apply(message, line);
        }
      }
    }
  } finally {
    reader.releaseLock();
    await body.cancel().catch(() => {});
  }
}

interface Partial {
  event: string | undefined;
  id: string | undefined;
  data: string | undefined;
}

const empty = (): Partial => ({ event: undefined, id: undefined, data: undefined });

function apply(message: Partial, line: string): void {
  if (line.startsWith(":")) return;
  const colon = line.indexOf(":");
  const field = colon === -1 ? line : line.slice(0, colon);
  let value = colon === -1 ? "" : line.slice(colon + 1);
  if (value.startsWith(" ")) value = value.slice(1);
  if (field === "event") message.event = value;
  else if (field === "id") message.id = value;
  else if (field === "data") message.data = message.data === undefined ? value : `${message.data}\n${value}`;
}
