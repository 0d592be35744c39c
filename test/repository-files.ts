/**
 * Checks over the repository's own files, for test/repository.test.ts: the repository must
 * stand alone, so no file may point at a path outside it, and every relative link in its
 * Markdown must lead to a file (and heading) that is in it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * The repository's files: what git tracks plus new files it would track (not ignored), so a
 * file is checked before it is committed. Paths are relative, with `/`.
 */
export function repositoryFiles(root = REPO_ROOT): string[] {
  const out = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const files = new Set(out.split("\0").filter(Boolean));
  // A tracked file deleted in the work tree is still listed by --cached.
  return [...files].filter((f) => existsSync(join(root, f))).sort();
}

/** Text, or undefined for a binary file (a NUL byte near its start). */
export function readText(root: string, file: string): string | undefined {
  const buf = readFileSync(join(root, file));
  if (buf.subarray(0, 8000).includes(0)) return undefined;
  return buf.toString("utf8");
}

/** What a reference to a place outside the repository looks like. */
const OUTSIDE: { pattern: RegExp; what: string }[] = [
  { pattern: /(?:^|[^\w.~-])\/(?:work|home|Users)\/[\w.-]/, what: "an absolute path on a development machine" },
  { pattern: /\.\.\/shared\//, what: "a folder beside the repository" },
  { pattern: /(?:^|[^\w.-])shared\/(?:contract|recipes|seeds)\b/, what: "a document kept outside the repository" },
];

/**
 * Files allowed to hold such text:
 *  - these checks themselves, which spell out the patterns;
 *  - recorded Temporal workflow histories: the SDK stores stack traces with the absolute source
 *    paths of the machine that recorded them, and the histories are replayed as recorded.
 */
export function mayReferToOutside(file: string): boolean {
  return (
    file === "test/repository-files.ts" ||
    file === "test/repository.test.ts" ||
    (file.split("/").includes("histories") && file.endsWith(".json"))
  );
}

export interface Finding {
  file: string;
  line: number;
  text: string;
  problem: string;
}

const lineAt = (text: string, index: number) => text.slice(0, index).split("\n").length;

/** Every reference to a place outside the repository in one file's text. */
export function outsideReferences(file: string, text: string): Finding[] {
  const found: Finding[] = [];
  text.split("\n").forEach((line, i) => {
    for (const { pattern, what } of OUTSIDE) {
      const m = pattern.exec(line);
      if (m) found.push({ file, line: i + 1, text: line.trim().slice(0, 200), problem: what });
    }
  });
  return found;
}

/** Blanks what Markdown does not render as links (code blocks, code spans, comments), keeping offsets and lines. */
function proseOnly(markdown: string): string {
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  let inFence: string | null = null;
  const lines = markdown.split("\n").map((line) => {
    const fence = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (inFence) {
      if (fence && fence[0] === inFence[0] && fence.length >= inFence.length) inFence = null;
      return blank(line);
    }
    if (fence) {
      inFence = fence;
      return blank(line);
    }
    return line;
  });
  return lines
    .join("\n")
    .replace(/<!--[\s\S]*?-->/g, blank)
    .replace(/``[^`]*?``|`[^`\n]*`/g, blank);
}

export interface MarkdownLink {
  target: string;
  line: number;
}

/** Inline links and images, reference definitions and HTML href/src attributes. */
export function markdownLinks(markdown: string): MarkdownLink[] {
  const prose = proseOnly(markdown);
  const links: MarkdownLink[] = [];
  const add = (target: string, index: number) => links.push({ target: target.trim(), line: lineAt(prose, index) });
  for (const m of prose.matchAll(
    /\]\(\s*(<[^>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g,
  ))
    add(m[1]!.replace(/^<|>$/g, ""), m.index);
  for (const m of prose.matchAll(/^ {0,3}\[[^\]\n]+\]:\s*(<[^>\n]*>|\S+)/gm)) add(m[1]!.replace(/^<|>$/g, ""), m.index);
  for (const m of prose.matchAll(/<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*"([^"]*)"/gi)) add(m[1]!, m.index);
  return links;
}

/** GitHub's anchor for a heading: rendered text, lower-cased, punctuation dropped, spaces to dashes. */
export function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/`/g, "")
    .replace(/\*+/g, "")
    .replace(/<[^>]+>/g, "");
  return rendered
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors a Markdown file offers: its headings (numbered when repeated) and explicit ids. */
export function markdownAnchors(markdown: string): Set<string> {
  const prose = proseOnly(markdown);
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const m of prose.matchAll(/^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gm)) {
    const slug = headingSlug(m[1]!);
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  for (const m of prose.matchAll(/<a\b[^>]*?\b(?:id|name)\s*=\s*"([^"]+)"/gi)) anchors.add(m[1]!);
  return anchors;
}

const EXTERNAL = /^(?:[a-z][a-z0-9+.-]*:|\/\/)/i;

/**
 * The relative links of one Markdown file that lead nowhere: outside the repository, to a path
 * that is not one of its files or folders, or to a heading the target does not have.
 * `files` are the repository's files; `readMarkdown` returns another Markdown file's text.
 */
export function brokenLinks(
  file: string,
  markdown: string,
  files: ReadonlySet<string>,
  readMarkdown: (file: string) => string,
): Finding[] {
  const folders = new Set<string>();
  for (const f of files) for (let d = posix.dirname(f); d !== "."; d = posix.dirname(d)) folders.add(d);
  const found: Finding[] = [];
  for (const { target, line } of markdownLinks(markdown)) {
    if (EXTERNAL.test(target)) continue;
    const problem = (why: string) => found.push({ file, line, text: target, problem: why });
    const [pathPart = "", fragment] = target.split("#", 2);
    let path: string;
    try {
      path = decodeURI(pathPart.split("?")[0]!);
    } catch {
      problem("the link is not a valid URI");
      continue;
    }
    const resolved =
      path === ""
        ? file
        : posix.normalize(path.startsWith("/") ? path.slice(1) : posix.join(posix.dirname(file), path));
    if (resolved.startsWith("..") || posix.isAbsolute(resolved)) {
      problem("the link leaves the repository");
      continue;
    }
    const linked = resolved.replace(/\/$/, "");
    if (!files.has(linked) && !folders.has(linked) && linked !== ".") {
      problem("no such file in the repository");
      continue;
    }
    if (fragment && /\.md$/i.test(linked) && files.has(linked)) {
      const anchors = markdownAnchors(linked === file ? markdown : readMarkdown(linked));
      if (!anchors.has(decodeURIComponent(fragment))) problem(`${linked} has no heading #${fragment}`);
    }
  }
  return found;
}
