/**
 * Text that came from a source (NetBox names, reasons, notes, step messages) printed for a
 * person: control characters are shown escaped, never interpreted, so a name holding
 * `ESC [2J` cannot clear the screen, `ESC ]52;` cannot set the clipboard and `ESC ]8;;` cannot
 * disguise a link. Bidirectional overrides are escaped too (they reorder what is shown). JSON and
 * YAML carry the exact data (both escape control characters themselves).
 */
// C0 controls, DEL, C1 controls, and the bidi embedding/override/isolate characters.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\u001b": "\\e" };

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => NAMED[c] ?? `\\u{${c.codePointAt(0)!.toString(16).padStart(2, "0")}}`);
}
