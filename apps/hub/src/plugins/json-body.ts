/**
 * The JSON body parser: Fastify's own (secure-json-parse, refusing a `__proto__` key or a
 * `constructor.prototype` with a 400), reached only by a body that could hold one. Its scan for
 * such keys is two regular expressions over the whole text, each trying a `\u` escape for every
 * character: for a 2.4 MB reflection push of 10,000 Ironic nodes, about 25 ms of the push. A key
 * spelled either way needs the literal word or a `\u` escape in the text, so a body with none of
 * `__proto__`, `constructor` and `\u` cannot hold one, and is parsed as is.
 */
import type { FastifyInstance } from "fastify";
import { storableBodies } from "./text-input.ts";

/**
 * What puts a control character in a string without a `\u` escape: DEL and C1, which JSON
 * allows raw (C0 it does not), and the escapes `\b` and `\f` (a `\\b` matches too, and only
 * costs that body the full check).
 */
const RAW_CONTROL = /[\x7F-\x9F]|\\[bf]/;

export function installJsonParser(app: FastifyInstance): void {
  // Fastify's defaults for both: an error (400), as before this parser.
  const secure = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body as string;
    if (
      text.length &&
      !text.includes("\\u") &&
      !text.includes("__proto__") &&
      !text.includes("constructor") &&
      !RAW_CONTROL.test(text)
    ) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Fastify's parser names the syntax error (400).
        return secure(request, text, done);
      }
      // No `\u`, `\b`, `\f`, DEL or C1 in the text: no string in it holds what the text-input check refuses.
      if (typeof parsed === "object" && parsed !== null) storableBodies.add(parsed);
      return done(null, parsed);
    }
    return secure(request, text, done);
  });
}
