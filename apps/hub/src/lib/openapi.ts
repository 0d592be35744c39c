import { STATUS_CODES } from "node:http";
import { ProblemSchema } from "@fm/domain";

type ProblemResponse = {
  description: string;
  content: { "application/problem+json": { schema: typeof ProblemSchema } };
};

/**
 * Declares a route's problem+json error responses (500 always included), so the OpenAPI
 * document lists every status a caller can receive.
 */
export function errorResponses<S extends number>(...statuses: S[]): Record<S | 500, ProblemResponse> {
  const all = [...new Set<number>([...statuses, 500])];
  return Object.fromEntries(
    all.map((s) => [
      s,
      { description: STATUS_CODES[s] ?? "Error", content: { "application/problem+json": { schema: ProblemSchema } } },
    ]),
  ) as Record<S | 500, ProblemResponse>;
}
