/**
 * `fleetctl api satellite ...`. Creating a satellite and rotating a secret answer with secrets
 * the hub shows once: they are printed (that is the command's purpose) and stderr says so.
 */
import { z } from "zod";
import {
  RotatedSecretSchema,
  SatelliteCreateSchema,
  SatelliteCreatedSchema,
  SatelliteListSchema,
  SatelliteSchema,
  type Satellite,
} from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { renderList, renderOne, type View } from "../output.ts";
import { collect, output, session, siteId, truncationNote, usageFromIssues } from "./common.ts";

const SATELLITE_VIEW: View<Satellite> = {
  kind: "satellite",
  name: (s) => s.name,
  columns: [
    { header: "name", value: (s) => s.name },
    { header: "env", value: (s) => s.environment },
    { header: "sites", value: (s) => s.siteIds.length },
    { header: "agents", value: (s) => s.clients.filter((c) => !c.revoked).length },
    {
      header: "last heartbeat",
      value: (s) =>
        s.clients
          .map((c) => c.lastHeartbeatAt)
          .filter(Boolean)
          .sort()
          .at(-1),
    },
    { header: "created", value: (s) => s.createdAt, wide: true },
    { header: "id", value: (s) => s.id, wide: true },
  ],
};

type Client = Satellite["clients"][number];
const CLIENT_VIEW: View<Client> = {
  kind: "client",
  name: (c) => c.clientId,
  columns: [
    { header: "agent", value: (c) => c.agent },
    { header: "client id", value: (c) => c.clientId },
    { header: "revoked", value: (c) => (c.revoked ? "yes" : "no"), tone: (t) => (t === "yes" ? "bad" : undefined) },
    { header: "last token", value: (c) => c.lastTokenAt },
    { header: "last heartbeat", value: (c) => c.lastHeartbeatAt },
  ],
};

type Secret = { agent: string; clientId: string; clientSecret: string };
const SECRET_VIEW: View<Secret> = {
  kind: "secret",
  name: (s) => s.clientId,
  columns: [
    { header: "agent", value: (s) => s.agent },
    { header: "client id", value: (s) => s.clientId },
    { header: "secret", value: (s) => s.clientSecret },
  ],
};

export async function list(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const r = await collect(
    ctx,
    async (p) => (await hub.request("GET", "/api/v1/satellites/", SatelliteListSchema, { query: p })).body,
  );
  ctx.out(await renderList(SATELLITE_VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

export async function get(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const s = (await hub.request("GET", `/api/v1/satellites/${enc(ctx.args[0])}/`, SatelliteSchema)).body;
  ctx.out(await renderOne(SATELLITE_VIEW, s, out));
  if (out.format === "table" || out.format === "wide")
    ctx.out(`\n${await renderList(CLIENT_VIEW, { items: s.clients, count: s.clients.length }, out)}`);
}

export async function create(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json", "yaml"]);
  const { hub } = await session(ctx);
  const siteIds = await Promise.all((ctx.opts.site as string[]).map((s) => siteId(hub, s)));
  const body = { name: String(ctx.args[0]), siteIds, environment: ctx.opts.env };
  const checked = SatelliteCreateSchema.safeParse(body);
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  const created = (
    await hub.request("POST", "/api/v1/satellites/", SatelliteCreatedSchema, {
      body,
      headers: { "idempotency-key": crypto.randomUUID() },
    })
  ).body;
  ctx.err("The secrets below are shown once: store them in the satellite's vault now.\n");
  if (out.format === "json" || out.format === "yaml") ctx.out(await renderOne(SATELLITE_VIEW, created, out));
  else ctx.out(await renderList(SECRET_VIEW, { items: created.secrets, count: created.secrets.length }, out));
}

export async function remove(ctx: Ctx): Promise<void> {
  const { hub } = await session(ctx);
  await hub.request("DELETE", `/api/v1/satellites/${enc(ctx.args[0])}/`, undefined);
  ctx.out(`satellite/${String(ctx.args[0])} deleted\n`);
}

export async function rotateSecret(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json", "yaml"]);
  const { hub } = await session(ctx);
  const path = `/api/v1/satellites/${enc(ctx.args[0])}/agents/${enc(ctx.opts.agent)}/rotate-secret/`;
  const rotated = (await hub.request("POST", path, RotatedSecretSchema)).body;
  ctx.err(`The new secret is shown once; the previous one works until ${rotated.previousSecretValidUntil}.\n`);
  if (out.format === "json" || out.format === "yaml") ctx.out(await renderOne(SECRET_VIEW, rotated, out));
  else ctx.out(await renderList(SECRET_VIEW, { items: [rotated], count: 1 }, out));
}

export async function revoke(ctx: Ctx): Promise<void> {
  const { hub } = await session(ctx);
  const path = `/api/v1/satellites/${enc(ctx.args[0])}/agents/${enc(ctx.opts.agent)}/revoke/`;
  // Revoking twice is a no-op on the hub, so the POST may be retried.
  await hub.request("POST", path, z.unknown(), { retry: true });
  ctx.out(`agent ${String(ctx.opts.agent)} of satellite/${String(ctx.args[0])} revoked\n`);
}

const enc = (v: unknown) => encodeURIComponent(String(v));
