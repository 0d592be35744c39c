import { describe, expect, it } from "vitest";
import {
  REPO_ROOT,
  brokenLinks,
  headingSlug,
  markdownAnchors,
  mayReferToOutside,
  outsideReferences,
  readText,
  repositoryFiles,
  type Finding,
} from "./repository-files.ts";

const show = (findings: Finding[]) => findings.map((f) => `${f.file}:${f.line}: ${f.problem}: ${f.text}`);

describe("the repository stands alone", () => {
  const files = repositoryFiles();

  it("lists the repository's files", () => {
    expect(files).toContain("README.md");
    expect(files).toContain("docs/api.md");
    expect(files.some((f) => f.startsWith("node_modules/"))).toBe(false);
  });

  it("no file refers to a path outside the repository", () => {
    const findings = files
      .filter((f) => !mayReferToOutside(f))
      .flatMap((f) => {
        const text = readText(REPO_ROOT, f);
        return text === undefined ? [] : outsideReferences(f, text);
      });
    expect(show(findings)).toEqual([]);
  });

  it("every relative link in its Markdown leads to a file, folder or heading in it", () => {
    const set = new Set(files);
    const read = (f: string) => readText(REPO_ROOT, f) ?? "";
    const findings = files.filter((f) => /\.md$/i.test(f)).flatMap((f) => brokenLinks(f, read(f), set, read));
    expect(show(findings)).toEqual([]);
  });
});

describe("references outside the repository", () => {
  const problems = (text: string) => outsideReferences("x.ts", text).map((f) => f.line);

  it("are found: machine paths, the folder beside the repository, documents kept outside it", () => {
    const text = [
      "const a = '/work/main/apps/hub/src/app.ts';",
      "// see ../shared/notes.md",
      "// as in shared/recipes/ironic.md",
      "README: contract in shared/contract/api-v1.md",
      "cp /home/alice/fleet/x .",
    ].join("\n");
    expect(problems(text)).toEqual([1, 2, 3, 4, 5]);
  });

  it("are not confused with the repository's own paths or the per-user cache", () => {
    const text = [
      'new URL("../../../../prisma/migrations", import.meta.url)',
      'CACHE="${FM_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleet-manager}"',
      "packages/test-support/src/ironic.ts and scripts/peers/lib.sh",
      "a shared/ folder of this package's own",
    ].join("\n");
    expect(problems(text)).toEqual([]);
  });

  it("are allowed only in these checks and in recorded workflow histories", () => {
    expect(mayReferToOutside("apps/satellite-agents/src/temporal-worker/histories/enrol-succeeded.json")).toBe(true);
    expect(mayReferToOutside("test/repository-files.ts")).toBe(true);
    expect(mayReferToOutside("docs/api.md")).toBe(false);
    expect(mayReferToOutside("apps/satellite-agents/src/temporal-worker/histories.ts")).toBe(false);
    const allowed = repositoryFiles().filter(mayReferToOutside);
    const histories = allowed.filter((f) =>
      /^apps\/satellite-agents\/src\/temporal-worker\/histories\/[^/]+\.json$/.test(f),
    );
    expect(histories.length).toBeGreaterThan(0);
    expect(allowed.filter((f) => !histories.includes(f)).sort()).toEqual([
      "test/repository-files.ts",
      "test/repository.test.ts",
    ]);
  });
});

describe("Markdown links", () => {
  const files = new Set(["README.md", "docs/api.md", "docs/peers.md", "scripts/setup.sh"]);
  const docs: Record<string, string> = {
    "docs/api.md": "# Hub API\n\n## Conventions\n\n### Versions, ETag and If-Match\n\n## Routes and scopes\n",
    "docs/peers.md": "# Peers\n\n## PostgreSQL\n\n### The embedded PostgreSQL\n",
  };
  const check = (file: string, markdown: string) =>
    brokenLinks(file, markdown, files, (f) => docs[f] ?? "").map((f) => `${f.line} ${f.text}: ${f.problem}`);

  it("that lead to files, folders and headings of the repository pass", () => {
    const readme = [
      "# Fleet Manager",
      "The [contract](docs/api.md), its [paging](docs/api.md#versions-etag-and-if-match) and",
      "[the routes](./docs/api.md#routes-and-scopes); [peers](docs/peers.md#the-embedded-postgresql),",
      "[setup](scripts/setup.sh), the [docs folder](docs/), [up](#fleet-manager), [from the root](/docs/api.md),",
      "[the web](https://example.com/x.md) and [mail](mailto:someone@example.com).",
      "![diagram](<docs/api.md>)",
      "[ref]: docs/peers.md",
    ].join("\n");
    expect(check("README.md", readme)).toEqual([]);
  });

  it("that lead nowhere are reported with their line", () => {
    const doc = [
      "# Peers",
      "See [the recipe](../../shared/recipes/ironic.md) and [setup](../scripts/setup.sh).",
      "[gone](missing.md), [no heading](api.md#no-such-heading), [no anchor](#nowhere)",
      "[a link over",
      "two lines](nothing/here.md)",
      '<a href="old.md">old</a>',
      "[ref]: ../README.md#nope",
    ].join("\n");
    expect(check("docs/peers.md", doc)).toEqual([
      "2 ../../shared/recipes/ironic.md: the link leaves the repository",
      "3 missing.md: no such file in the repository",
      "3 api.md#no-such-heading: docs/api.md has no heading #no-such-heading",
      "3 #nowhere: docs/peers.md has no heading #nowhere",
      "5 nothing/here.md: no such file in the repository",
      "7 ../README.md#nope: README.md has no heading #nope",
      "6 old.md: no such file in the repository",
    ]);
  });

  it("inside code is not a link", () => {
    const doc = ["# Peers", "`[not](a-link.md)`", "```", "[nor](this.md)", "```", "<!-- [nor](that.md) -->"].join("\n");
    expect(check("docs/peers.md", doc)).toEqual([]);
  });

  it("anchors are GitHub's heading slugs, numbered when a heading repeats", () => {
    expect(headingSlug("Versions, ETag and If-Match")).toBe("versions-etag-and-if-match");
    expect(headingSlug("`PUT /api/v1/sites/{id}` (admin)")).toBe("put-apiv1sitesid-admin");
    expect(headingSlug("Jobs: workflow agent and Temporal worker")).toBe("jobs-workflow-agent-and-temporal-worker");
    expect([...markdownAnchors("## Start\n## Start\n```\n# not a heading\n```\n")]).toEqual(["start", "start-1"]);
  });
});

describe("migrations", () => {
  it("each has a version of its own: the runner orders by version, and a shared one breaks databases migrated from either branch", () => {
    const versions = repositoryFiles()
      .filter((f) => /^prisma\/migrations\/\d+_[^/]+\.sql$/.test(f))
      .map((f) => f.split("/").at(-1)!.split("_")[0]!);
    expect(versions.length).toBeGreaterThan(10);
    expect(versions.filter((v, i) => versions.indexOf(v) !== i)).toEqual([]);
  });
});
