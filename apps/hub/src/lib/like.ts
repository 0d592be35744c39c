/**
 * Substring filters (`?name=`, `?q=`) match the text literally: PostgreSQL's LIKE reads `%` and
 * `_` as wildcards and `\` as its escape, and Prisma's `contains` passes them through, so
 * `?name=_` would match every device. Each is escaped with `\`, LIKE's default escape.
 */
export const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `text` as a LIKE pattern matching it literally anywhere. */
export const containing = (text: string): string => `%${likeLiteral(text)}%`;
