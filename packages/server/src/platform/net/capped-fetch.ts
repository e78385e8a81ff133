/** The body of a response grew past the cap; the transfer was stopped. */
export class ResponseTooLargeError extends Error {
  override name = "ResponseTooLargeError";
}

const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

/**
 * A `fetch` whose response bodies fail with `ResponseTooLargeError` once they pass `maxBytes`, for
 * libraries that read a whole tenant-chosen server's answer into memory (the MCP SDK does).
 */
export function capResponseBytes(inner: typeof fetch, maxBytes: number): typeof fetch {
  const capped = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await inner(input, init);
    if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
    let seen = 0;
    const limiter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > maxBytes) controller.error(new ResponseTooLargeError(`the response is larger than ${maxBytes} bytes`));
        else controller.enqueue(chunk);
      },
    });
    return new Response(response.body.pipeThrough(limiter), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return capped as typeof fetch;
}
