/**
 * The one mapping from database constraint violations to domain errors. Repos wrap their
 * writes with it and name, per kind of violation, the domain error a caller should see; any
 * other error passes through unchanged (and ends as a 500, or a 503 when the database is away).
 */
import type { DomainError } from "@fm/domain";
import { Prisma } from "../generated/prisma/client.ts";

export interface ConstraintViolation {
  kind: "unique" | "foreign_key";
  /** The violated constraint or index (e.g. `sites_slug_key`), or its fields, as the driver reports it. */
  constraint: string;
}

type ErrorFor = (violation: ConstraintViolation) => DomainError | undefined;

/** The constraint violation behind a Prisma error, if that is what it is. */
export function constraintViolation(err: unknown): ConstraintViolation | undefined {
  if (!(err instanceof Prisma.PrismaClientKnownRequestError)) return undefined;
  // P2014: deleting a row that a required relation still points at.
  const kind = err.code === "P2002" ? "unique" : err.code === "P2003" || err.code === "P2014" ? "foreign_key" : null;
  if (!kind) return undefined;
  const meta = err.meta as
    | { target?: unknown; driverAdapterError?: { cause?: { constraint?: { index?: string; fields?: string[] } } } }
    | undefined;
  const reported = meta?.driverAdapterError?.cause?.constraint;
  const constraint = reported?.index ?? reported?.fields?.join(",") ?? (meta?.target ? String(meta.target) : undefined);
  return { kind, constraint: constraint ?? err.message };
}

/**
 * A `.catch` handler: a unique or foreign-key violation becomes the domain error `errors` gives
 * for it (a function may look at the constraint and return undefined to let it through).
 */
export function translateConstraintErrors(errors: {
  unique?: DomainError | ErrorFor;
  foreignKey?: DomainError | ErrorFor;
}): (err: unknown) => never {
  return (err) => {
    const violation = constraintViolation(err);
    const mapping = violation && (violation.kind === "unique" ? errors.unique : errors.foreignKey);
    const domain = typeof mapping === "function" ? mapping(violation!) : mapping;
    throw domain ?? err;
  };
}
