/** The webhook sink against the signature-verifying test receiver, over HTTP. */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordsOfEvent } from "../transform.ts";
import { device, event, site } from "../testing/fixtures.ts";
import { WebhookReceiver } from "../testing/webhook-receiver.ts";
import { WebhookSink } from "./webhook.ts";

const secret = () => `whsec_${randomBytes(32).toString("base64")}`;
const sin1 = site("sin1");
const ctx = { connector: "hooks-prod", siteIds: new Set([sin1.id]) };
const records = ["gpu-1", "poison-gpu", "gpu-2"].map(
  (name, i) => recordsOfEvent(event(i + 1, "device.created", device(sin1, name), sin1.id), ctx)[0]!.record,
);
const receiver = new WebhookReceiver(secret(), (r) => r.kind === "device" && r.name.startsWith("poison"));
const signal = new AbortController().signal;

beforeAll(() => receiver.start());
afterAll(() => receiver.stop());

describe("the webhook sink", () => {
  it("delivers a signed batch the receiver verifies, and the same batch again only as the same ids", async () => {
    const sink = new WebhookSink({ url: receiver.url, secret: () => receiver.secret, timeoutMs: 5000 });
    const ok = [records[0]!, records[2]!];
    expect(await sink.deliver(ok, signal)).toEqual({ kind: "ok" });
    expect(await sink.deliver(ok, signal)).toEqual({ kind: "ok" });
    expect([...receiver.stored.keys()]).toEqual(ok.map((r) => r.recordId));
    expect(receiver.duplicates).toBe(2);
  });

  it("reports a refused record as rejected (to bisect), and a wrong secret as sink_auth (to retry)", async () => {
    const sink = new WebhookSink({ url: receiver.url, secret: () => receiver.secret, timeoutMs: 5000 });
    expect(await sink.deliver(records, signal)).toEqual({ kind: "rejected", reason: "422: record refused" });
    const wrong = new WebhookSink({ url: receiver.url, secret, timeoutMs: 5000 });
    expect(await wrong.deliver([records[0]!], signal)).toMatchObject({ kind: "retry", errorClass: "sink_auth" });
    expect(receiver.badSignatures).toBe(1);
  });

  it("a malformed secret is sink_config, sent nowhere: not the receiver being down", async () => {
    const before = receiver.stored.size + receiver.badSignatures;
    const sink = new WebhookSink({ url: receiver.url, secret: () => "whsec_c2hvcnQ=", timeoutMs: 5000 });
    expect(await sink.deliver([records[0]!], signal)).toEqual({
      kind: "retry",
      errorClass: "sink_config",
      message: "a webhook secret is whsec_ followed by at least 24 base64 bytes",
    });
    expect(receiver.stored.size + receiver.badSignatures).toBe(before);
  });
});
