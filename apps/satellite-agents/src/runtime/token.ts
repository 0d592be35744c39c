/** The OAuth2 token source every process shares lives with the clients (@fm/clients), so the connectors use the same one. */
export { TokenSource, type TokenSourceOptions } from "@fm/clients";
