import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";
import prettier from "eslint-config-prettier";
import { builtinModules } from "node:module";

/** Focused or skipped tests pass silently outside CI: refused everywhere. */
const noFocusedOrSkippedTests = {
  selector:
    "MemberExpression[object.name=/^(it|test|describe|suite)$/][property.name=/^(only|skip|skipIf|runIf|todo)$/]",
  message: "No focused, skipped or conditional tests: a test runs everywhere or is deleted.",
};

/*
 * Boundaries. The hub's layers: a module's routes.ts (schemas, scope, one service call) ->
 * service.ts (rules, transactions, audit and feed) -> repo.ts (the only database access).
 * lib/ is shared by every module and depends on none. The domain package runs in browsers too.
 * apps/hub/src/boundaries.test.ts shows each rule firing on a bad file and passing a good one.
 */
const HUB = "apps/hub/src";

/** A route reaches the database only through its service. */
const routesStayOffTheDatabase = {
  files: [`${HUB}/**/routes.ts`],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          { regex: "(^|/)db(/|$)", message: "Routes do not touch the database layer: call the module's service." },
          { regex: "(^|/)generated/", message: "Routes do not use the Prisma client: call the module's service." },
          { regex: "^@prisma/", message: "Routes do not use Prisma: call the module's service." },
          { regex: "^pg(/|$)", message: "Routes do not use pg: call the module's service." },
          { regex: "(^|/)repo(\\.ts)?$", message: "Routes call the service, never a repo." },
        ],
      },
    ],
  },
};

const TYPE_AWARE_RULES = [
  "@typescript-eslint/no-floating-promises",
  "@typescript-eslint/no-misused-promises",
  "@typescript-eslint/await-thenable",
  "@typescript-eslint/no-unnecessary-type-assertion",
];

/**
 * lib/ is what every module may use, and changes/ (the change kernel: the recorder and the audit and
 * feed outbox every write commits with) is what every module writes through: neither depends on one.
 */
const libIndependentOfModules = {
  files: [`${HUB}/lib/**`, `${HUB}/changes/**`],
  rules: {
    "no-restricted-imports": [
      "error",
      {
        patterns: [
          {
            regex: "(^|/)modules/",
            message:
              "lib/ and changes/ must not import a module: move the code into the module, or take it as a parameter.",
          },
        ],
      },
    ],
  },
};

/** Only repos (and db/, the seed, the test harness) use the generated Prisma client at runtime; types are fine. */
const PRISMA_AT_RUNTIME = [
  {
    regex: "(^|/)generated/",
    allowTypeImports: true,
    message: "Only a repo uses the Prisma client at runtime (import type is fine).",
  },
  {
    regex: "^@prisma/",
    allowTypeImports: true,
    message: "Only a repo or db/ uses Prisma at runtime (import type is fine).",
  },
];
/** A module's repo: its repo.ts, or the files of its repo/ folder when it is split (devices). */
const REPOS = [`${HUB}/**/repo.ts`, `${HUB}/**/repo/*.ts`];
const prismaOnlyInRepos = {
  files: [`${HUB}/**/*.ts`],
  ignores: [...REPOS, `${HUB}/db/**`, `${HUB}/seed/**`, `${HUB}/testing/**`, `${HUB}/generated/**`],
  rules: { "@typescript-eslint/no-restricted-imports": ["error", { patterns: PRISMA_AT_RUNTIME }] },
};

/*
 * A module uses another only through the other's public.ts (and the types of its service, which
 * app.ts injects): its repo, state and helpers are its own. Tests are exempt (they drive what
 * they test). A plugin is held to the same. apps/hub/src/folder-graph.test.ts keeps the folders
 * free of import cycles.
 */
const THROUGH_PUBLIC = "Another module is used only through its public.ts (and its service's types, import type).";
/** Another module's files as a module's file `depth` folders below the module's own imports them. */
const otherModule = (depth) => {
  const up = String.raw`^(\.\./){${depth + 1}}[a-z-]+/`;
  return [
    { regex: String.raw`${up}(?!public\.ts$|service\.ts$)[^/]+$`, message: THROUGH_PUBLIC },
    { regex: String.raw`${up}service\.ts$`, allowTypeImports: true, message: THROUGH_PUBLIC },
  ];
};
const PLUGIN_TO_MODULE = [{ regex: String.raw`(^|/)modules/[a-z-]+/(?!public\.ts$)[^/]+$`, message: THROUGH_PUBLIC }];
const restrict = (patterns) => ({ "@typescript-eslint/no-restricted-imports": ["error", { patterns }] });
const modulesThroughPublic = [
  // A module's own files, and those one folder down (a split repo: devices/repo/).
  { files: [`${HUB}/modules/*/*.ts`], rules: restrict([...PRISMA_AT_RUNTIME, ...otherModule(0)]) },
  { files: [`${HUB}/modules/*/*/*.ts`], rules: restrict([...PRISMA_AT_RUNTIME, ...otherModule(1)]) },
  { files: [`${HUB}/modules/*/repo.ts`], rules: restrict(otherModule(0)) },
  { files: [`${HUB}/modules/*/repo/*.ts`], rules: restrict(otherModule(1)) },
  // Tests drive what they test, across modules; the Prisma rule still holds for them.
  { files: [`${HUB}/modules/**/*.test.ts`], rules: restrict(PRISMA_AT_RUNTIME) },
  {
    files: [`${HUB}/plugins/**/*.ts`],
    ignores: ["**/*.test.ts"],
    rules: restrict([...PRISMA_AT_RUNTIME, ...PLUGIN_TO_MODULE]),
  },
];

/** Node's built-in modules, bare (`fs`, `fs/promises`) or `node:`-prefixed. */
const NODE_BUILTINS = builtinModules.filter((m) => !m.startsWith("_"));
const BROWSER_SAFE = "packages/domain runs in browsers too (the web UI imports it): no Node built-ins.";
const builtinRegex = `^(node:.*|(${NODE_BUILTINS.map((m) => m.replace(/[/]/g, "\\/")).join("|")}))$`;

/** Code that must run without Node: no built-in module, no Node global (`message` says why). */
const noNode = (message, extraSyntax = []) => ({
  "no-restricted-imports": [
    "error",
    {
      paths: NODE_BUILTINS.map((name) => ({ name, message })),
      patterns: [{ regex: "^node:", message }],
    },
  ],
  "no-restricted-globals": [
    "error",
    ...["Buffer", "process", "__dirname", "__filename", "require", "global", "module", "exports"].map((name) => ({
      name,
      message,
    })),
  ],
  "no-restricted-syntax": [
    "error",
    noFocusedOrSkippedTests,
    ...extraSyntax,
    { selector: `ImportExpression > Literal[value=/${builtinRegex}/]`, message },
  ],
});

/** The domain contract is imported by the web UI: nothing in it may need Node. */
const domainBrowserSafe = { files: ["packages/domain/src/**"], rules: noNode(BROWSER_SAFE) };

/** The fleet spec library is pure functions; reading evidence (files, the nebius CLI) is evidence.ts alone. */
const fleetSpecPure = {
  files: ["packages/fleet-spec/src/**"],
  ignores: ["packages/fleet-spec/src/evidence.ts", "packages/fleet-spec/src/testing.ts", "**/*.test.ts"],
  rules: noNode("packages/fleet-spec is pure: Node I/O belongs in src/evidence.ts (the ./evidence export)."),
};

/*
 * Browser journeys (test/web-journey-*.e2e.test.ts) get where they go the way a person does: one
 * first page (`env.loggedIn(user, path)`), then clicks and typing, and a shared link pasted into a
 * new tab (`env.openShared(context, url)`). Anything that jumps to a URL behind the UI's back is
 * refused, in the test's own code and in scripts it runs in the page. test/journey-lint.test.ts
 * shows each rule firing.
 */
const JOURNEY =
  "A journey goes where a person goes: env.loggedIn(user, path) for the first page, clicks and typing after it, env.openShared(context, url) for a pasted link, env.pressReload(page) for F5.";
const IN_PAGE_SCRIPT =
  "CallExpression[callee.property.name=/^(evaluate|evaluateHandle|addInitScript|\\$eval|\\$\\$eval)$/]";
const NAVIGATING = "location|history|pushState|replaceState|open\\(";
const journeysNavigateLikePeople = {
  files: ["test/web-journey-*.e2e.test.ts"],
  rules: {
    "no-restricted-syntax": [
      "error",
      noFocusedOrSkippedTests,
      { selector: "CallExpression[callee.property.name=/^(goto|goBack|goForward|reload)$/]", message: JOURNEY },
      { selector: "MemberExpression[property.name=/^(pushState|replaceState)$/]", message: JOURNEY },
      {
        selector: "AssignmentExpression > MemberExpression.left[property.name=/^(href|pathname|search|hash)$/]",
        message: JOURNEY,
      },
      {
        selector: "AssignmentExpression > :matches(Identifier, MemberExpression).left[name='location']",
        message: JOURNEY,
      },
      { selector: "AssignmentExpression > MemberExpression.left[property.name='location']", message: JOURNEY },
      { selector: "MemberExpression[property.name=/^(assign|replace)$/][object.name='location']", message: JOURNEY },
      {
        selector: "MemberExpression[property.name=/^(assign|replace)$/][object.property.name='location']",
        message: JOURNEY,
      },
      {
        selector: `${IN_PAGE_SCRIPT} :matches(Literal[value=/${NAVIGATING}/], TemplateElement[value.raw=/${NAVIGATING}/], Identifier[name=/^(location|history|open)$/])`,
        message: JOURNEY,
      },
    ],
  },
};

/**
 * For linting text that is no file of a project (the tests of the rules above, through ESLint's
 * API): the type-aware rules need one, the rules under test need no types.
 */
export const withoutTypeAwareRules = {
  languageOptions: { parserOptions: { projectService: false } },
  rules: Object.fromEntries(TYPE_AWARE_RULES.map((r) => [r, "off"])),
};

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/generated/**", "**/dist/**", ".data/**", ".cache/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "error",
      eqeqeq: ["error", "always", { null: "ignore" }],
    },
  },
  {
    files: ["**/*.test.ts", "test/**", "bench/**", "scripts/**", "packages/test-support/**", "**/src/testing/**"],
    rules: { "no-console": "off", "no-restricted-syntax": ["error", noFocusedOrSkippedTests] },
  },
  {
    // The web UI runs in browsers only: their globals, and Node's built-ins are refused as in the domain.
    files: ["apps/web/src/**"],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: "^node:", message: "The web UI runs in browsers: no Node built-ins." }] },
      ],
    },
  },
  {
    // Type-aware rules: a promise nobody awaits, a promise where a callback's result is ignored,
    // an await of a non-promise, a cast the types already guarantee. Each workspace's tsconfig
    // (and the root one for test/, bench/, scripts/) is the project these files are checked in.
    files: ["**/*.ts", "**/*.tsx"],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: Object.fromEntries(TYPE_AWARE_RULES.map((r) => [r, "error"])),
  },
  routesStayOffTheDatabase,
  libIndependentOfModules,
  prismaOnlyInRepos,
  ...modulesThroughPublic,
  // After the test files' settings: it keeps their focused/skipped-test check.
  domainBrowserSafe,
  fleetSpecPure,
  journeysNavigateLikePeople,
  // Formatting is Prettier's (checked by `npm run lint`); rules that would fight it are off.
  prettier,
);
