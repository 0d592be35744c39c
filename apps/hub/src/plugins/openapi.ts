import fp from "fastify-plugin";
import type { FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { jsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";
import { browserPageHeaders } from "../lib/browser-headers.ts";

export const HUB_API_VERSION = "1.0.0";

/** Every tag an operation may carry, in the order Swagger UI shows them (an undefined tag fails the document's lint test). */
export const OPENAPI_TAGS = [
  { name: "operations", description: "Liveness and readiness probes; no token needed" },
  { name: "oauth", description: "OAuth2 client credentials token endpoint, its signing keys and discovery documents" },
  { name: "identity", description: "Who the caller is; signing-key rotation" },
  { name: "sites", description: "Sites (data centres), each served by one satellite" },
  { name: "inventory", description: "Device roles and device types as the sources report them" },
  { name: "devices", description: "Devices: the reconciled view of every source, and the operators' fields" },
  { name: "reflections", description: "Agents push each source's complete observed state of a site" },
  { name: "netbox", description: "The NetBox agents' settings" },
  { name: "discrepancies", description: "Where the sources disagree about a device" },
  { name: "jobs", description: "Lifecycle jobs run on devices by the workflow workers" },
  { name: "slurm-bootstrap-configs", description: "How a site's devices of one role join SLURM" },
  { name: "satellites", description: "Expected satellites and their agents' OAuth2 clients" },
  { name: "clients", description: "Machine clients (connectors, automation) and their secrets" },
  { name: "feeds", description: "The inventory change feed and its snapshot, for connectors" },
  { name: "audit", description: "Every mutating call, who made it and what it changed" },
];

type Transform = typeof jsonSchemaTransform;
type TransformObject = typeof jsonSchemaTransformObject;

/**
 * Per operation, on top of the zod schemas: who may call it, from the route's own `config.scope`
 * (the one the request-context plugin enforces). A route without a scope, or a public one, takes
 * no token (`security: []`); the others say in their description which scope they need.
 */
const transform: Transform = (input) => {
  const out = jsonSchemaTransform(input);
  const schema = out.schema as Record<string, unknown> | undefined;
  if (!schema || schema.hide) return out;
  const scope = (input.route.config as { scope?: string } | undefined)?.scope;
  const who =
    !scope || scope === "public"
      ? "No bearer token needed."
      : scope === "agent"
        ? "Needs a satellite agent's token (its own satellite and agent only)."
        : `Needs the \`${scope}\` scope.`;
  if ((!scope || scope === "public") && !schema.security) schema.security = [];
  schema.description = schema.description ? `${String(schema.description)}\n\n${who}` : who;
  return out;
};

/**
 * The components of the document, less the schemas no operation reaches: the registry names every
 * schema twice (as sent and as served, `XInput` and `X`), and most are only ever one of the two.
 */
const transformObject: TransformObject = (input) => {
  const doc = jsonSchemaTransformObject(input) as {
    paths?: unknown;
    components?: { schemas?: Record<string, unknown> };
  };
  const schemas = doc.components?.schemas;
  if (!schemas) return doc as ReturnType<TransformObject>;
  const PREFIX = "#/components/schemas/";
  const reached = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== "object") return;
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string" && v.startsWith(PREFIX)) {
        const name = decodeURIComponent(v.slice(PREFIX.length));
        if (!reached.has(name)) {
          reached.add(name);
          visit(schemas[name]);
        }
      } else visit(v);
    }
  };
  visit({ ...doc, components: { ...doc.components, schemas: {} } });
  doc.components!.schemas = Object.fromEntries(Object.entries(schemas).filter(([name]) => reached.has(name)));
  return doc as ReturnType<TransformObject>;
};

/** OpenAPI 3.1 at /openapi.json, generated from the routes' zod schemas; Swagger UI at /docs. */
export const openapiPlugin = fp<{ docsEnabled: boolean }>(
  async (app: FastifyInstance, { docsEnabled }) => {
    await app.register(swagger, {
      openapi: {
        openapi: "3.1.0",
        info: {
          title: "Fleet Manager hub API",
          version: HUB_API_VERSION,
          description:
            "Control plane for a fleet of GPU servers. Errors are RFC 9457 application/problem+json " +
            "(the token endpoint's are RFC 6749's). Tokens come from /oauth/token (client credentials) " +
            "or from the company's OpenID Connect issuer for people.",
          contact: { name: "Fleet Manager maintainers" },
        },
        // The hub serves this document itself: paths are relative to wherever it is reached.
        servers: [{ url: "/", description: "This hub" }],
        tags: OPENAPI_TAGS,
        components: {
          securitySchemes: {
            bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
            // The token endpoint's client_secret_basic.
            clientBasic: { type: "http", scheme: "basic" },
          },
        },
        security: [{ bearerAuth: [] }],
      },
      transform,
      transformObject,
    });
    app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
    if (docsEnabled) {
      // The same protections as the web UI's pages (same origin): no other origin may frame it,
      // scripts only from the hub (Swagger UI 5 has no inline script; it does set inline styles), no sniffing.
      // No validator badge: it would load an image from validator.swagger.io.
      // In a scope of its own: every answer under /docs, static files and 404s included.
      const headers = browserPageHeaders({ inlineStyles: true });
      await app.register(async (scope) => {
        scope.addHook("onSend", async (_request, reply, payload) => {
          reply.headers(headers);
          return payload;
        });
        await scope.register(swaggerUi, {
          routePrefix: "/docs",
          uiConfig: { url: "/openapi.json", validatorUrl: null },
        });
      });
    }
  },
  { name: "openapi" },
);
