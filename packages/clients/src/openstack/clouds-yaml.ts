/**
 * OpenStack credentials from a clouds.yaml file (the format openstacksdk and the `openstack`
 * CLI read: https://docs.openstack.org/openstacksdk/latest/user/config/configuration.html).
 *
 * Two auth types are supported:
 * - `none`: a standalone Ironic without Keystone. The endpoint is
 *   `baremetal_endpoint_override`, else `auth.endpoint`.
 * - `v3applicationcredential`: a Keystone application credential, by `application_credential_id`,
 *   or by `application_credential_name` plus the owning user (`user_id`, or `username` with
 *   `user_domain_name`/`user_domain_id`).
 *
 * Secrets never appear in error messages, and a loaded cloud prints its secret as
 * "[redacted]" (JSON, util.inspect, string conversion), so logging a config is safe.
 */
import { readFileSync } from "node:fs";
import { inspect } from "node:util";
import { parseDocument } from "yaml";

/** The file is unreadable, is not a clouds.yaml, or the cloud asked for is missing or incomplete. */
export class CloudConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CloudConfigError";
  }
}

/** A secret that does not print itself. */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return "[redacted]";
  }
  toJSON(): string {
    return "[redacted]";
  }
  [inspect.custom](): string {
    return "[redacted]";
  }
}

export type EndpointInterface = "public" | "internal" | "admin";

interface CloudBase {
  /** The cloud's key under `clouds:`. */
  name: string;
  /** The clouds.yaml it came from. */
  file: string;
  regionName?: string;
  interface: EndpointInterface;
}

export interface NoAuthCloud extends CloudBase {
  authType: "none";
  endpoint: string;
}

export interface ApplicationCredentialCloud extends CloudBase {
  authType: "v3applicationcredential";
  authUrl: string;
  credential:
    | { id: string; secret: Secret }
    | {
        name: string;
        user: { id: string } | { name: string; domain: { id: string } | { name: string } };
        secret: Secret;
      };
  /** `baremetal_endpoint_override`: use this instead of the catalog's endpoint. */
  endpointOverride?: string;
}

export type Cloud = NoAuthCloud | ApplicationCredentialCloud;

export const SUPPORTED_AUTH_TYPES = ["none", "v3applicationcredential"] as const;

/**
 * Reads one cloud from a clouds.yaml. `cloudName` picks it (callers pass their `--cloud`
 * option or `OS_CLOUD`); without one, the file must hold exactly one cloud. Only the file and
 * the cloud are validated here; Keystone is first contacted by ironicClientFor().
 */
export function loadCloud(file: string, cloudName?: string): Cloud {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CloudConfigError(
      `cannot read clouds file ${file}: ${code === "ENOENT" ? "no such file" : (code ?? String(err))}`,
    );
  }
  // The parser's own messages quote the offending source line, which may hold a secret: only
  // its error code and position are reported.
  const doc = parseDocument(text, { prettyErrors: false });
  const yamlError = doc.errors[0];
  if (yamlError) {
    const before = text.slice(0, yamlError.pos[0]).split("\n");
    throw new CloudConfigError(
      `cannot parse clouds file ${file}: invalid YAML (${yamlError.code} at line ${before.length}, column ${before.at(-1)!.length + 1})`,
    );
  }
  const root: unknown = doc.toJS();
  const clouds = isRecord(root) ? root.clouds : undefined;
  if (!isRecord(clouds)) throw new CloudConfigError(`clouds file ${file} has no \`clouds:\` map`);
  const names = Object.keys(clouds);
  const available = names.length ? names.map((n) => JSON.stringify(n)).join(", ") : "none";
  let name: string;
  if (cloudName !== undefined && cloudName !== "") {
    if (!Object.hasOwn(clouds, cloudName))
      throw new CloudConfigError(`cloud ${JSON.stringify(cloudName)} is not in ${file}; available: ${available}`);
    name = cloudName;
  } else if (names.length === 1) {
    name = names[0]!;
  } else {
    throw new CloudConfigError(
      `${file} holds ${names.length ? "several clouds" : "no cloud"}: name one (--cloud or OS_CLOUD); available: ${available}`,
    );
  }
  return parseCloud(clouds[name], name, file);
}
/** Reads the string fields of one cloud, naming the field (never its value: a mistyped key may hold a secret). */
function fieldReader(where: string, authType: unknown) {
  const str = (obj: Record<string, unknown>, key: string, label: string): string | undefined => {
    const v = obj[key];
    if (v === undefined || v === null || v === "") return undefined;
    if (typeof v !== "string") throw new CloudConfigError(`${where}: \`${label}\` must be a string`);
    return v;
  };
  const required = (obj: Record<string, unknown>, key: string, label: string): string => {
    const v = str(obj, key, label);
    if (v === undefined)
      throw new CloudConfigError(`${where}: \`${label}\` is required for auth_type ${String(authType)}`);
    return v;
  };
  const url = (v: string | undefined, label: string): string | undefined => {
    if (v === undefined) return undefined;
    if (!URL.canParse(v) || !/^https?:$/.test(new URL(v).protocol))
      throw new CloudConfigError(`${where}: \`${label}\` is not an http(s) URL`);
    return v;
  };
  return { str, required, url };
}

function parseCloud(entry: unknown, name: string, file: string): Cloud {
  const where = `cloud ${JSON.stringify(name)} in ${file}`;
  if (!isRecord(entry)) throw new CloudConfigError(`${where} is not a map`);
  const auth = entry.auth === undefined ? {} : entry.auth;
  if (!isRecord(auth)) throw new CloudConfigError(`${where}: \`auth\` is not a map`);
  const { str, required, url } = fieldReader(where, entry.auth_type);

  const iface = (str(entry, "interface", "interface") ?? "public").replace(/URL$/, ""); // "publicURL" is the v2 spelling
  if (iface !== "public" && iface !== "internal" && iface !== "admin")
    throw new CloudConfigError(`${where}: \`interface\` must be public, internal or admin`);
  const base: CloudBase = { name, file, interface: iface, regionName: str(entry, "region_name", "region_name") };
  const endpointOverride = url(
    str(entry, "baremetal_endpoint_override", "baremetal_endpoint_override"),
    "baremetal_endpoint_override",
  );

  const authType = entry.auth_type;
  if (authType === "none") {
    const endpoint = endpointOverride ?? url(str(auth, "endpoint", "auth.endpoint"), "auth.endpoint");
    if (!endpoint)
      throw new CloudConfigError(`${where}: auth_type none needs \`baremetal_endpoint_override\` or \`auth.endpoint\``);
    return { ...base, authType: "none", endpoint };
  }
  if (authType === "v3applicationcredential") {
    const authUrl = url(required(auth, "auth_url", "auth.auth_url"), "auth.auth_url")!;
    const secret = new Secret(required(auth, "application_credential_secret", "auth.application_credential_secret"));
    const credential = applicationCredential(auth, secret, where, str);
    return { ...base, authType: "v3applicationcredential", authUrl, credential, endpointOverride };
  }
  const given =
    typeof authType === "string" ? JSON.stringify(authType) : authType === undefined ? "missing" : "not a string";
  throw new CloudConfigError(
    `${where}: auth_type ${given} is not supported (supported: ${SUPPORTED_AUTH_TYPES.join(", ")})`,
  );
}

/** The credential by id, or by name and its user. */
function applicationCredential(
  auth: Record<string, unknown>,
  secret: Secret,
  where: string,
  str: ReturnType<typeof fieldReader>["str"],
): ApplicationCredentialCloud["credential"] {
  const id = str(auth, "application_credential_id", "auth.application_credential_id");
  if (id) return { id, secret };
  const credName = str(auth, "application_credential_name", "auth.application_credential_name");
  if (!credName)
    throw new CloudConfigError(
      `${where}: \`auth.application_credential_id\` or \`auth.application_credential_name\` is required`,
    );
  // A credential name is only unique per user, so Keystone needs the user too.
  const userId = str(auth, "user_id", "auth.user_id");
  const username = str(auth, "username", "auth.username");
  const domainId = str(auth, "user_domain_id", "auth.user_domain_id");
  const domainName = str(auth, "user_domain_name", "auth.user_domain_name");
  let user: { id: string } | { name: string; domain: { id: string } | { name: string } };
  if (userId) user = { id: userId };
  else if (username && (domainId || domainName))
    user = { name: username, domain: domainId ? { id: domainId } : { name: domainName! } };
  else
    throw new CloudConfigError(
      `${where}: \`auth.application_credential_name\` needs \`auth.user_id\`, or \`auth.username\` with \`auth.user_domain_name\` or \`auth.user_domain_id\``,
    );
  return { name: credName, user, secret };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
