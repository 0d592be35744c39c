import { z } from "zod";

/** RFC 9457 problem details, as every hub error is answered (`application/problem+json`). */
export const ProblemSchema = z
  .object({
    type: z.string().describe("URI reference identifying the problem type"),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().describe("Stable, machine-readable error code"),
    requestId: z.string().describe("The request id, also sent as the X-Request-Id header"),
    traceId: z
      .string()
      .describe(
        "The request's W3C trace id (the caller's traceparent, or one the hub made): trace_id in the hub's logs",
      ),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe("Field-level validation errors (400 only)"),
  })
  .meta({ id: "Problem" });
export type Problem = z.infer<typeof ProblemSchema>;

export const PROBLEM_TYPE_BASE = "https://fleet-manager.dev/problems/";
export const problemType = (code: string): string => PROBLEM_TYPE_BASE + code.replace(/_/g, "-");
