/**
 * What an IMAGE_NODE job may hand Ironic as `instance_info/image_source`.
 *
 * Ironic takes a Glance image id or a URL it downloads; with a `file://` URL the conductor
 * copies one of its own files onto a node the operator then boots (OSSA-2025-001,
 * CVE-2025-44021), and any URL the conductor fetches is a request from inside the control
 * plane. So the hub accepts a Glance image id or name, or an `https://` URL of a public host
 * with its digest; plain `http://` only where the hub is configured to (FM_IMAGE_ALLOW_HTTP),
 * and only the hosts of FM_IMAGE_HOSTS when that list is set.
 */
import { z } from "zod";

export interface ImageSourcePolicy {
  /** Accept `http://` URLs (an image mirror on a trusted provisioning network). */
  allowHttp: boolean;
  /** Lower-case host names a URL may name; empty: any public host. A `.example.com` entry takes its subdomains. */
  hosts: readonly string[];
}

export const DEFAULT_IMAGE_SOURCE_POLICY: ImageSourcePolicy = { allowHttp: false, hosts: [] };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Glance image (its id, or a name Glance resolves), or a URL the conductor downloads. */
export type ImageSource = { kind: "glance"; id: string } | { kind: "url"; url: URL };

/**
 * Hosts no image is fetched from: this machine, link-local (cloud metadata at 169.254.169.254
 * and fd00:ec2::254), the unspecified address, and names that resolve to them by convention.
 * Private ranges are left to FM_IMAGE_HOSTS: image mirrors often live on one.
 */
function forbiddenHost(host: string): string | undefined {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (h === "localhost" || h.endsWith(".localhost")) return "this machine";
  if (h === "metadata.google.internal" || h === "metadata") return "a cloud metadata service";
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(h);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    if (a === 127) return "this machine";
    if (a === 0) return "the unspecified address";
    if (a === 169 && b === 254) return "a link-local address (cloud metadata)";
    return undefined;
  }
  if (h.includes(":")) {
    if (h === "::1" || h === "::") return "this machine";
    if (/^fe[89ab][0-9a-f]:/.test(h)) return "a link-local address";
    if (h.startsWith("fd00:ec2:")) return "a cloud metadata service";
    // An IPv4 address mapped into IPv6 (::ffff:127.0.0.1 or its hex form) is that address.
    const mapped = /^::ffff:(.+)$/.exec(h);
    if (mapped) {
      const tail = mapped[1]!;
      const parts = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(tail);
      const v4text = parts
        ? [
            parseInt(parts[1]!, 16) >> 8,
            parseInt(parts[1]!, 16) & 255,
            parseInt(parts[2]!, 16) >> 8,
            parseInt(parts[2]!, 16) & 255,
          ].join(".")
        : tail;
      return forbiddenHost(v4text);
    }
  }
  return undefined;
}

/**
 * The image as Ironic will read it, or why it may not be one (a sentence naming the rule).
 * Without a policy, the contract's rule (the API's schema and the worker): a Glance image, or an
 * http(s) URL without credentials. With the hub's policy, also its scheme and host rules: http
 * only if allowed; a host FM_IMAGE_HOSTS names exactly is taken as the hub's owner decided
 * (a mirror on this machine, in a test or a lab); otherwise never this machine, link-local or
 * metadata, and only FM_IMAGE_HOSTS' hosts when it is set.
 */
export function parseImageSource(
  image: string,
  policy?: ImageSourcePolicy,
): { ok: true; source: ImageSource } | { ok: false; message: string } {
  if (UUID.test(image)) return { ok: true, source: { kind: "glance", id: image.toLowerCase() } };
  if (!/^[a-z][a-z0-9+.-]*:/i.test(image)) {
    // No scheme: a Glance image name, which Ironic looks up in Glance; a path is not one.
    if (image.includes("/") || image.includes("\\"))
      return { ok: false, message: "must be a Glance image id or name, or an https:// URL: a path is neither" };
    return { ok: true, source: { kind: "glance", id: image } };
  }
  let url: URL;
  try {
    url = new URL(image);
  } catch {
    return { ok: false, message: "is not a URL" };
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme !== "https" && scheme !== "http")
    return { ok: false, message: `a ${scheme}: URL is not accepted: give a Glance image id or an https:// URL` };
  if (url.username || url.password)
    return { ok: false, message: "a URL may not carry credentials: job parameters are readable by every reader" };
  if (!policy) return { ok: true, source: { kind: "url", url } };
  if (scheme === "http" && !policy.allowHttp)
    return { ok: false, message: "an http:// URL is not accepted here (FM_IMAGE_ALLOW_HTTP is off): use https://" };
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (policy.hosts.includes(host)) return { ok: true, source: { kind: "url", url } };
  const why = forbiddenHost(host);
  if (why) return { ok: false, message: `${host} is ${why}: no image is fetched from there` };
  if (policy.hosts.length && !policy.hosts.some((h) => h.startsWith(".") && host.endsWith(h)))
    return { ok: false, message: `${host} is not one of the image hosts this hub allows (FM_IMAGE_HOSTS)` };
  return { ok: true, source: { kind: "url", url } };
}

/** Image hosts as FM_IMAGE_HOSTS spells them: comma-separated host names, `.suffix` for subdomains. */
export const ImageHostsSchema = z
  .string()
  .transform((v) =>
    v
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
  )
  .pipe(
    z.array(
      z
        .string()
        .regex(
          /^\.?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/,
          "must be a host name or .suffix",
        ),
    ),
  );

/**
 * A REIMAGE image: a Glance image id or name, which Ironic's rebuild looks up in Glance. Never
 * anything with a scheme or a path, which Ironic would read as a URL to fetch (file:// first).
 */
export function glanceImageRefProblem(image: string): string | undefined {
  const ref = parseImageSource(image);
  if (!ref.ok || ref.source.kind !== "glance")
    return "must be a Glance image id or name, not a URL or a path (IMAGE_NODE takes an https:// URL with its digest)";
  return undefined;
}
