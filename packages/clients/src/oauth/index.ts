/**
 * OAuth 2.0 / OpenID Connect for command-line logins: discovery, the authorization code grant
 * with PKCE on a loopback redirect, the device authorization grant, refresh, and client
 * credentials. Node's fetch and crypto only; refusals are OAuthErrors in the issuer's words.
 */
export {
  OAuthError,
  IssuerUnavailableError,
  discoverIssuer,
  type IssuerMetadata,
  type TokenSet,
} from "./token-endpoint.ts";
export { loginWithAuthorizationCode } from "./authorization-code.ts";
export { loginWithDeviceCode } from "./device-code.ts";
export { clientCredentialsToken, refreshToken } from "./grants.ts";
