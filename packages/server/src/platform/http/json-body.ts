import { AppError } from "../errors.js";
import type { HttpApp } from "./app.js";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "./json-depth.js";

/**
 * svc's one JSON body parser, wrapped around Fastify's own (which refuses `__proto__` and `constructor`
 * members): the text must be UTF-8 and nest at most MAX_JSON_DEPTH levels, and a body with nothing in it
 * reaches the route as `undefined`, so that optional-body.ts decides what an absent body means (Fastify's
 * parser would refuse it before any route hook runs).
 */
export function parseJsonBodies(app: HttpApp): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    const text = decodeUtf8(request.headers["content-type"], body as Buffer);
    if (text instanceof AppError) {
      done(text, undefined);
      return;
    }
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(new AppError("invalid_request", `request body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep`), undefined);
      return;
    }
    parseJson(request, text, done);
  });
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * JSON bodies are UTF-8 (RFC 8259): another declared charset is a 415, and bytes that are not UTF-8 a
 * 400, rather than text quietly read with replacement characters (issue 9, F6). A leading byte order mark
 * is dropped, as RFC 8259 allows a parser to do.
 */
function decodeUtf8(contentType: string | undefined, body: Buffer): string | AppError {
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return new AppError("unsupported_media_type", `JSON bodies must be UTF-8; got charset ${charset.slice(0, 40)}`);
  }
  try {
    return strictUtf8.decode(body);
  } catch {
    return new AppError("invalid_request", "request body is not valid UTF-8");
  }
}
