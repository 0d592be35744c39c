/**
 * A second, independent OIDC issuer for tests of people's tokens: discovery document and
 * JWKS over real HTTP, RS256 keys, and a way to mint ID/access tokens with given claims.
 */
import { createServer, type Server } from "node:http";
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from "jose";

export interface TestIssuer {
  issuer: string;
  token(claims: Record<string, unknown>, opts?: { audience?: string; expiresIn?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "people-1", alg: "RS256", use: "sig" };
  let issuer = "";
  const server: Server = createServer((req, res) => {
    res.setHeader("content-type", "application/json");
    if (req.url === "/.well-known/openid-configuration") {
      res.end(
        JSON.stringify({
          issuer,
          jwks_uri: `${issuer}/jwks`,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["RS256"],
        }),
      );
    } else if (req.url === "/jwks") {
      res.end(JSON.stringify({ keys: [jwk] }));
    } else {
      res.statusCode = 404;
      res.end("{}");
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    issuer,
    token: (claims, opts = {}) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: "RS256", kid: "people-1" })
        .setIssuer(issuer)
        .setAudience(opts.audience ?? "fleet-manager")
        .setSubject(String(claims.sub ?? claims.email ?? "someone"))
        .setIssuedAt()
        .setExpirationTime(opts.expiresIn ?? "10m")
        .sign(privateKey as CryptoKey),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
