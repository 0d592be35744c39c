/** A nullable timestamp column as the API shows it (RFC 3339, UTC). */
export const isoOrNull = (d: Date | null): string | null => (d ? d.toISOString() : null);
