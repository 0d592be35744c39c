/**
 * `fleetctl api client ...`: machine OAuth2 clients (connectors, automation). Creating one and
 * rotating its secret answer with a secret the hub shows once: it is printed (that is the
 * command's purpose) and stderr says so.
 */
import { z } from "zod";
import {
  ClientIdSchema,
  MachineClientCreateSchema,
  MachineClientCreatedSchema,
  MachineClientListSchema,
  MachineClientRotatedSchema,
  MachineClientSchema,
  type MachineClient,
} from "@fm/domain";
import type { Ctx } from "../command-kit.ts";
import { UsageError } from "../errors.ts";
import { renderList, renderOne, type View } from "../output.ts";
import { parseScopeOption } from "../scopes.ts";
import { collect, output, session, truncationNote, usageFromIssues } from "./common.ts";

const CLIENT_VIEW: View<MachineClient> = {
  kind: "client",
  name: (c) => c.clientId,
  columns: [
    { header: "client id", value: (c) => c.clientId },
    { header: "kind", value: (c) => c.kind },
    { header: "scopes", value: (c) => c.scopes.join(" ") },
    {
      header: "revoked",
      value: (c) => (c.revokedAt ? "yes" : "no"),
      tone: (t) => (t === "yes" ? "bad" : undefined),
    },
    { header: "last token", value: (c) => c.lastTokenAt },
    { header: "description", value: (c) => c.description, wide: true },
    { header: "created", value: (c) => c.createdAt, wide: true },
    { header: "overlap until", value: (c) => c.rotationOverlapUntil, wide: true },
  ],
};

type Secret = { clientId: string; clientSecret: string };
const SECRET_VIEW: View<Secret> = {
  kind: "secret",
  name: (s) => s.clientId,
  columns: [
    { header: "client id", value: (s) => s.clientId },
    { header: "secret", value: (s) => s.clientSecret },
  ],
};

/** The positional client id, checked before any request so a typo is a usage error. */
function clientIdArg(ctx: Ctx): string {
  const id = String(ctx.args[0]);
  const checked = ClientIdSchema.safeParse(id);
  if (!checked.success) throw new UsageError(`client id ${JSON.stringify(id)}: ${checked.error.issues[0]!.message}`);
  return id;
}

export async function list(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const r = await collect(
    ctx,
    async (p) => (await hub.request("GET", "/api/v1/clients/", MachineClientListSchema, { query: p })).body,
  );
  ctx.out(await renderList(CLIENT_VIEW, r, out));
  truncationNote(ctx, out, r.items.length, r.count, r.truncated);
}

export async function get(ctx: Ctx): Promise<void> {
  const out = output(ctx);
  const { hub } = await session(ctx);
  const c = (await hub.request("GET", `/api/v1/clients/${clientIdArg(ctx)}/`, MachineClientSchema)).body;
  ctx.out(await renderOne(CLIENT_VIEW, c, out));
}

export async function create(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json", "yaml"]);
  const clientId = clientIdArg(ctx);
  const scopes = parseScopeOption(ctx.opts.scope as string | undefined);
  const description = ctx.opts.description as string | undefined;
  const body = { clientId, scopes, ...(description !== undefined ? { description } : {}) };
  const checked = MachineClientCreateSchema.safeParse(body);
  if (!checked.success) throw usageFromIssues(checked.error.issues);
  const { hub } = await session(ctx);
  const created = (
    await hub.request("POST", "/api/v1/clients/", MachineClientCreatedSchema, {
      body,
      headers: { "idempotency-key": crypto.randomUUID() },
    })
  ).body;
  ctx.err("The secret below is shown once: store it where the client runs (its vault) now.\n");
  if (out.format === "json" || out.format === "yaml") ctx.out(await renderOne(CLIENT_VIEW, created, out));
  else ctx.out(await renderList(SECRET_VIEW, { items: [created], count: 1 }, out));
}

export async function rotateSecret(ctx: Ctx): Promise<void> {
  const out = output(ctx, ["table", "json", "yaml"]);
  const path = `/api/v1/clients/${clientIdArg(ctx)}/rotate-secret/`;
  const { hub } = await session(ctx);
  const rotated = (await hub.request("POST", path, MachineClientRotatedSchema)).body;
  ctx.err(`The new secret is shown once; the previous one works until ${rotated.previousSecretValidUntil}.\n`);
  if (out.format === "json" || out.format === "yaml") ctx.out(await renderOne(SECRET_VIEW, rotated, out));
  else ctx.out(await renderList(SECRET_VIEW, { items: [rotated], count: 1 }, out));
}

export async function revoke(ctx: Ctx): Promise<void> {
  const clientId = clientIdArg(ctx);
  const { hub } = await session(ctx);
  // Revoking twice answers the same on the hub, so the POST may be retried.
  await hub.request("POST", `/api/v1/clients/${clientId}/revoke/`, z.unknown(), { retry: true });
  ctx.out(`client/${clientId} revoked\n`);
}
