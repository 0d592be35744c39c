import fp from "fastify-plugin";
import type { FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { jsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";

export const HUB_API_VERSION = "1.0.0";

/** OpenAPI 3.1 at /openapi.json, generated from the routes' zod schemas; Swagger UI at /docs. */
export const openapiPlugin = fp<{ docsEnabled: boolean }>(
  async (app: FastifyInstance, { docsEnabled }) => {
    await app.register(swagger, {
      openapi: {
        openapi: "3.1.0",
        info: {
          title: "Fleet Manager hub API",
          version: HUB_API_VERSION,
          description: "Control plane for a fleet of GPU servers. Errors are RFC 9457 application/problem+json.",
        },
        components: {
          securitySchemes: { bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
        },
        security: [{ bearerAuth: [] }],
      },
      transform: jsonSchemaTransform,
      transformObject: jsonSchemaTransformObject,
    });
    app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
    if (docsEnabled) {
      await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { url: "/openapi.json" } });
    }
  },
  { name: "openapi" },
);
