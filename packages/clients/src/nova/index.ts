/** The OpenStack Compute (Nova) client. */
export * from "./nova-client.ts";
