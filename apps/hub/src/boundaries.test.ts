/**
 * The architecture's boundaries are lint rules (eslint.config.js). Each rule is shown firing
 * on a deliberately bad file placed where it applies, and a good file passing, through ESLint's
 * own API with the repository's configuration.
 */
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { withoutTypeAwareRules } from "../../../eslint.config.js";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfig: withoutTypeAwareRules,
});

/** The messages of the boundary rules for `code` as if it were the file at `filePath`. */
async function violations(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId ?? "fatal"}: ${m.message}`);
}

const ROUTES = "apps/hub/src/modules/widgets/routes.ts";
const SERVICE = "apps/hub/src/modules/widgets/service.ts";
const REPO = "apps/hub/src/modules/widgets/repo.ts";
const PLUGIN = "apps/hub/src/plugins/widgets.ts";
const LIB = "apps/hub/src/lib/widgets.ts";
const KERNEL = "apps/hub/src/changes/widgets.ts";
const DOMAIN = "packages/domain/src/widgets.ts";

describe("a hub route stays off the database", () => {
  it.each([
    ["the database layer", 'import type { Db } from "../../db/client.ts";\nexport type X = Db;'],
    [
      "the generated Prisma client",
      'import type { Prisma } from "../../generated/prisma/client.ts";\nexport type X = Prisma.SiteWhereInput;',
    ],
    ["a Prisma package", 'import { PrismaPg } from "@prisma/adapter-pg";\nexport const x = PrismaPg;'],
    ["pg", 'import pg from "pg";\nexport const x = pg;'],
    ["its repo", 'import { widgetRepo } from "./repo.ts";\nexport const x = widgetRepo;'],
    ["another module's repo", 'import { siteRepo } from "../sites/repo.ts";\nexport const x = siteRepo;'],
  ])("refuses an import of %s", async (_what, code) => {
    expect(await violations(ROUTES, code)).toContainEqual(expect.stringMatching(/^no-restricted-imports: .*Routes/));
  });

  it("accepts a route that imports its service, the domain and lib/", async () => {
    const code = [
      'import type { FastifyInstance } from "fastify";',
      'import { SiteSchema } from "@fm/domain";',
      'import { errorResponses } from "../../lib/openapi.ts";',
      'import type { WidgetService } from "./service.ts";',
      "export const x = (app: FastifyInstance, s: WidgetService) => [app, s, SiteSchema, errorResponses];",
    ].join("\n");
    expect(await violations(ROUTES, code)).toEqual([]);
  });
});

describe("lib/ and the change kernel (changes/) do not import a module", () => {
  it.each([
    [LIB, 'import { auditRepo } from "../modules/audit/repo.ts";\nexport const x = auditRepo;'],
    [KERNEL, 'import { feedRepo } from "../modules/feed/repo.ts";\nexport const x = feedRepo;'],
  ])("refuses an import from modules/ in %s", async (file, code) => {
    expect(await violations(file, code)).toEqual([
      expect.stringMatching(/^no-restricted-imports: .*lib\/ and changes\/ must not import a module/),
    ]);
  });

  it("accepts lib code that uses the domain and the database layer's types", async () => {
    const code =
      'import type { Db } from "../db/client.ts";\nimport { Uuid } from "@fm/domain";\nexport const x = (db: Db) => [db, Uuid];';
    expect(await violations(LIB, code)).toEqual([]);
  });
});

describe("a module uses another only through its public.ts", () => {
  const THROUGH_PUBLIC = /^@typescript-eslint\/no-restricted-imports: .*only through its public\.ts/;
  it.each([
    [SERVICE, "another module's repo", 'import { siteRepo } from "../sites/repo.ts";\nexport const x = siteRepo;'],
    [SERVICE, "another module's helper", 'import { toDevice } from "../devices/state.ts";\nexport const x = toDevice;'],
    [
      SERVICE,
      "a value of another module's service",
      'import { differs } from "../devices/service.ts";\nexport const x = differs;',
    ],
    [
      REPO,
      "another module's repo, from a repo",
      'import { deviceRepo } from "../devices/repo.ts";\nexport const x = deviceRepo;',
    ],
    [
      "apps/hub/src/modules/widgets/repo/rows.ts",
      "another module's repo, from a split repo",
      'import { siteRepo } from "../../sites/repo.ts";\nexport const x = siteRepo;',
    ],
    [
      PLUGIN,
      "a module's repo, from a plugin",
      'import { idempotencyRepo } from "../modules/idempotency/repo.ts";\nexport const x = idempotencyRepo;',
    ],
  ])("refuses, in %s, an import of %s", async (file, _what, code) => {
    expect(await violations(file, code)).toEqual([expect.stringMatching(THROUGH_PUBLIC)]);
  });

  it("accepts another module's public.ts and its service's types, its own repo, and a plugin's use of public.ts", async () => {
    const service = [
      'import { requireSite } from "../sites/public.ts";',
      'import type { DeviceService } from "../devices/service.ts";',
      'import { widgetRepo } from "./repo.ts";',
      'import type { Db } from "../../db/client.ts";',
      "export const x = (db: Db, s: DeviceService) => [requireSite(db, ''), s, widgetRepo];",
    ].join("\n");
    expect(await violations(SERVICE, service)).toEqual([]);
    const plugin =
      'import { idempotencyKeys } from "../modules/idempotency/public.ts";\nexport const x = idempotencyKeys;';
    expect(await violations(PLUGIN, plugin)).toEqual([]);
  });

  it("leaves a module's tests free to reach into another module", async () => {
    const code = 'import { siteRepo } from "../sites/repo.ts";\nexport const x = siteRepo;';
    expect(await violations("apps/hub/src/modules/widgets/widgets.int.test.ts", code)).toEqual([]);
  });
});

describe("only repos use the generated Prisma client at runtime", () => {
  const runtime = 'import { Prisma } from "../../generated/prisma/client.ts";\nexport const x = Prisma.JsonNull;';

  it("refuses a runtime import in a service, and of @prisma/* anywhere but db/", async () => {
    expect(await violations(SERVICE, runtime)).toEqual([
      expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: .*Only a repo uses/),
    ]);
    expect(
      await violations(
        "apps/hub/src/app.ts",
        'import { PrismaPg } from "@prisma/adapter-pg";\nexport const x = PrismaPg;',
      ),
    ).toEqual([expect.stringMatching(/^@typescript-eslint\/no-restricted-imports: .*Only a repo or db\//)]);
  });

  it("accepts type-only imports in a service, and runtime imports in a repo, db/, the seed and the test harness", async () => {
    const types =
      'import type { Prisma } from "../../generated/prisma/client.ts";\nexport type X = Prisma.SiteWhereInput;';
    expect(await violations(SERVICE, types)).toEqual([]);
    for (const file of [
      "apps/hub/src/modules/widgets/repo.ts",
      "apps/hub/src/modules/widgets/repo/rows.ts",
      "apps/hub/src/db/widgets.ts",
      "apps/hub/src/seed/widgets.ts",
      "apps/hub/src/testing/widgets.ts",
    ])
      expect(await violations(file, runtime), file).toEqual([]);
  });
});

describe("packages/domain uses no Node built-in", () => {
  it.each([
    ["a node: module", 'import { readFileSync } from "node:fs";\nexport const x = readFileSync;'],
    ["a bare built-in module", 'import path from "path";\nexport const x = path;'],
    ["a built-in submodule", 'import { readFile } from "fs/promises";\nexport const x = readFile;'],
    ["a dynamic import of a built-in", 'export const x = () => import("node:crypto");'],
    ["Buffer", 'export const x = Buffer.from("a").toString("base64");'],
    ["process", "export const x = process.env.HOME;"],
    ["__dirname", "export const x = __dirname;"],
    ["require", 'export const x = require("zod");'],
    ["global", "export const x = global;"],
  ])("refuses %s", async (_what, code) => {
    expect(await violations(DOMAIN, code)).toContainEqual(
      expect.stringMatching(/^no-restricted-(imports|globals|syntax): .*runs in browsers too/),
    );
  });

  it("accepts the platform APIs browsers share with Node", async () => {
    const code = [
      'import { z } from "zod";',
      "export const schema = z.string();",
      'export const encoded = btoa(String.fromCharCode(...new TextEncoder().encode("a")));',
      "export const now = globalThis.Date.now();",
    ].join("\n");
    expect(await violations(DOMAIN, code)).toEqual([]);
  });

  it("still refuses focused tests in the domain's test files", async () => {
    const code = 'import { it } from "vitest";\nit.only("x", () => {});';
    expect(await violations("packages/domain/src/widgets.test.ts", code)).toEqual([
      expect.stringMatching(/^no-restricted-syntax: No focused/),
    ]);
  });
});

describe("packages/fleet-spec is pure outside its evidence module", () => {
  it.each([
    ["a node: module", 'import { readFile } from "node:fs/promises";\nexport const x = readFile;'],
    ["process", "export const x = process.env.HOME;"],
  ])("refuses %s in the library", async (_what, code) => {
    expect(await violations("packages/fleet-spec/src/widgets.ts", code)).toContainEqual(
      expect.stringMatching(/^no-restricted-(imports|globals): .*packages\/fleet-spec is pure/),
    );
  });

  it("accepts Node I/O in evidence.ts", async () => {
    const code = 'import { readFile } from "node:fs/promises";\nexport const x = readFile;';
    expect(await violations("packages/fleet-spec/src/evidence.ts", code)).toEqual([]);
  });
});

describe("every test runs everywhere", () => {
  const files = [
    "test/widgets.e2e.test.ts",
    "apps/satellite-agents/src/widgets.int.test.ts",
    "packages/clients/src/widgets.test.ts",
  ];
  it.each(
    files.flatMap((file) =>
      ["it.only", "describe.only", "test.skip", "describe.skip", "it.skipIf(true)", "it.runIf(false)", "it.todo"].map(
        (call) => [file, call] as const,
      ),
    ),
  )("refuses %s using %s", async (file, call) => {
    const code = `import { describe, it, test } from "vitest";\n${call}("x", () => {});\nvoid describe;\nvoid test;`;
    expect(await violations(file, code)).toContainEqual(expect.stringMatching(/^no-restricted-syntax: No focused/));
  });

  it("accepts a plain test", async () => {
    const code = 'import { expect, it } from "vitest";\nit("x", () => expect(1).toBe(1));';
    expect(await violations(files[0]!, code)).toEqual([]);
  });
});
