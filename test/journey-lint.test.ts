/**
 * The journey tests' rule (eslint.config.js, `journeysNavigateLikePeople`): in
 * test/web-journey-*.e2e.test.ts every way of jumping to a URL behind the UI's back is refused,
 * shown here on bad code and on the good shape, through ESLint's API with the repository's config.
 */
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { withoutTypeAwareRules } from "../eslint.config.js";

const eslint = new ESLint({
  cwd: fileURLToPath(new URL("..", import.meta.url)),
  overrideConfig: withoutTypeAwareRules,
});
const JOURNEY = "test/web-journey-widgets.e2e.test.ts";

async function violations(filePath: string, body: string): Promise<string[]> {
  const code = [
    'import type { Page, BrowserContext } from "playwright-core";',
    "interface Env { loggedIn(u: object, p: string): Promise<{ page: Page }>; openShared(c: BrowserContext, u: string): Promise<Page> }",
    "export async function run(page: Page, context: BrowserContext, env: Env, url: string) {",
    body,
    "}",
  ].join("\n");
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.map((m) => `${m.ruleId ?? "fatal"}: ${m.message}`);
}

const refused = expect.stringMatching(/^no-restricted-syntax: A journey goes where a person goes/);

describe("a browser journey navigates as a person does", () => {
  it.each([
    ["page.goto", "await page.goto(url);"],
    ["page.reload", "await page.reload();"],
    ["page.goBack", "await page.goBack();"],
    ["history.pushState in a page function", 'await page.evaluate(() => history.pushState(null, "", "/ui/jobs"));'],
    ["history.replaceState in a page string", "await page.evaluate(\"history.replaceState(null, '', '/ui/jobs')\");"],
    ["location.href = in a page function", 'await page.evaluate(() => { location.href = "/ui/jobs"; });'],
    ["window.location.href = in a page function", 'await page.evaluate(() => { window.location.href = "/ui/jobs"; });'],
    ["location = in a page function", 'await page.evaluate(() => { location = "/ui/jobs" as never; });'],
    ["location.assign in a page function", 'await page.evaluate(() => location.assign("/ui/jobs"));'],
    ["location.replace in a page string", "await page.evaluate(`location.replace('/ui/jobs')`);"],
    ["a navigating init script", "await context.addInitScript({ content: \"location.assign('/ui/jobs')\" });"],
    ["window.open in a page function", 'await page.evaluate(() => window.open("/ui/jobs"));'],
  ])("refuses %s", async (_what, body) => {
    expect(await violations(JOURNEY, body)).toContainEqual(refused);
  });

  it("accepts the first page, clicks, a pasted link and reading the page", async () => {
    const body = [
      'const { page: first } = await env.loggedIn({ email: "ada@example.com" }, "/ui/devices");',
      'await first.getByRole("link", { name: "Jobs" }).click();',
      "const shared = await env.openShared(context, first.url());",
      'await page.evaluate("JSON.stringify({ ...localStorage })");',
      "await page.evaluate(() => document.title);",
      "return [shared, url];",
    ].join("\n");
    expect(await violations(JOURNEY, body)).toEqual([]);
  });

  it("leaves other test files and the harness alone", async () => {
    expect(await violations("test/web.e2e.test.ts", "await page.goto(url);")).toEqual([]);
    expect(await violations("test/web-env.ts", "await page.goto(url);")).toEqual([]);
  });
});
