import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSink } from "./connector.ts";
import { ConfigError, type ConnectorConfig } from "./env.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "connector-sink-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const webhook = (secretFile: string) =>
  ({
    CONNECTOR_SINK: "webhook",
    WEBHOOK_URL: "https://hooks.example.com/fleet",
    WEBHOOK_SECRET_FILE: secretFile,
    CONNECTOR_HTTP_TIMEOUT_MS: 5000,
  }) as ConnectorConfig;

describe("the sink a connector starts with", () => {
  it("refuses a malformed webhook secret at start, naming the variable and never the secret", async () => {
    const file = join(dir, "short.secret");
    await writeFile(file, "whsec_c2hvcnQ=\n");
    const err = (() => {
      try {
        makeSink(webhook(file));
      } catch (e) {
        return e as Error;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message).toContain(
      "WEBHOOK_SECRET_FILE: a webhook secret is whsec_ followed by at least 24 base64 bytes",
    );
    expect(err!.message).not.toContain("c2hvcnQ");
  });

  it("starts with a well-formed one", async () => {
    const file = join(dir, "good.secret");
    await writeFile(file, `whsec_${Buffer.alloc(32, 7).toString("base64")}\n`);
    expect(makeSink(webhook(file)).name).toBe("webhook");
  });
});
