import { describe, expect, it } from "vitest";
import {
  DEFAULT_IMAGE_SOURCE_POLICY,
  glanceImageRefProblem,
  parseImageSource,
  ImageHostsSchema,
} from "./image-source.ts";
import { JobCreateSchema } from "./jobs.ts";

const DEVICE = "0190a5b4-3333-7000-8000-0000000000aa";
const SHA256 = { algo: "sha256", value: "ab".repeat(32) };
const imageIssues = (kind: "IMAGE_NODE" | "REIMAGE", params: unknown) =>
  JobCreateSchema.safeParse({ kind, deviceIds: [DEVICE], params })
    .error?.issues.filter((i) => i.path.join(".") === "params.image")
    .map((i) => i.message) ?? [];

describe("IMAGE_NODE image", () => {
  it("takes a Glance image id or name, and an https URL with its digest", () => {
    expect(imageIssues("IMAGE_NODE", { image: "0190A5B4-3333-7000-8000-000000000001" })).toEqual([]);
    expect(imageIssues("IMAGE_NODE", { image: "ubuntu-24.04-gpu" })).toEqual([]);
    expect(imageIssues("IMAGE_NODE", { image: "https://images.example/u.qcow2", osHash: SHA256 })).toEqual([]);
    expect(parseImageSource("0190A5B4-3333-7000-8000-000000000001")).toEqual({
      ok: true,
      source: { kind: "glance", id: "0190a5b4-3333-7000-8000-000000000001" },
    });
  });

  // The probe's request: {"kind":"IMAGE_NODE","params":{"image":"file:///etc/ironic/ironic.conf"}} was a 201.
  it.each([
    ["file:///etc/ironic/ironic.conf", "a file: URL is not accepted"],
    ["FILE:///etc/passwd", "a file: URL is not accepted"],
    ["gopher://169.254.169.254:80/_GET", "a gopher: URL is not accepted"],
    ["ftp://images.example/u.img", "a ftp: URL is not accepted"],
    ["data:text/plain,x", "a data: URL is not accepted"],
    ["javascript:alert(1)", "a javascript: URL is not accepted"],
    ["oci://registry.example/img", "a oci: URL is not accepted"],
    ["/etc/ironic/ironic.conf", "a path is neither"],
    ["../../etc/passwd", "a path is neither"],
    ["https://user:pw@images.example/u.img", "may not carry credentials"],
    ["https://169.254.169.254/latest/meta-data", "link-local"],
    ["https://127.0.0.1/u.img", "this machine"],
    ["https://localhost/u.img", "this machine"],
    ["https://[::1]/u.img", "this machine"],
    ["https://[::ffff:127.0.0.1]/u.img", "this machine"],
    ["https://[fe80::1]/u.img", "link-local"],
    ["https://[fd00:ec2::254]/u.img", "cloud metadata"],
    ["https://0.0.0.0/u.img", "unspecified"],
    ["https://metadata.google.internal/x", "cloud metadata"],
    ["http://images.example/u.img", "http:// URL is not accepted here"],
  ])("refuses %s, digest or not", (image, why) => {
    const problem = parseImageSource(image, DEFAULT_IMAGE_SOURCE_POLICY);
    expect(problem.ok).toBe(false);
    expect(problem.ok ? "" : problem.message).toContain(why);
    // The contract itself (the API's schema, and the worker) refuses other schemes, paths and
    // credentials; hosts and plain http are the hub's configuration.
    const contract = !/^https?:/i.test(image) || image.includes("@");
    expect(imageIssues("IMAGE_NODE", { image, osHash: SHA256 }).join()).toBe(
      contract ? (problem.ok ? "" : problem.message) : "",
    );
  });

  it("takes http:// only where allowed, and still refuses link-local hosts then", () => {
    const http = "http://mirror.prov.example/u.img";
    expect(parseImageSource(http, { allowHttp: false, hosts: [] }).ok).toBe(false);
    expect(parseImageSource(http, { allowHttp: true, hosts: [] }).ok).toBe(true);
    expect(parseImageSource("http://169.254.169.254/", { allowHttp: true, hosts: [] }).ok).toBe(false);
  });

  it("keeps to FM_IMAGE_HOSTS when it is set: a host, or a .suffix for its subdomains", () => {
    const hosts = ImageHostsSchema.parse(" images.example.com, .cdn.example ");
    expect(hosts).toEqual(["images.example.com", ".cdn.example"]);
    const policy = { allowHttp: false, hosts };
    expect(parseImageSource("https://images.example.com/a.img", policy).ok).toBe(true);
    expect(parseImageSource("https://IMAGES.example.com/a.img", policy).ok).toBe(true);
    expect(parseImageSource("https://eu.cdn.example/a.img", policy).ok).toBe(true);
    const other = parseImageSource("https://images.example.com.evil.test/a.img", policy);
    expect(other).toEqual({
      ok: false,
      message: "images.example.com.evil.test is not one of the image hosts this hub allows (FM_IMAGE_HOSTS)",
    });
    expect(parseImageSource("https://cdn.example/a.img", policy).ok).toBe(false);
    expect(ImageHostsSchema.safeParse("images.example.com/path").success).toBe(false);
    // A host named exactly is the hub owner's decision, even this machine (a lab's mirror);
    // a suffix entry never opens a forbidden host.
    const lab = { allowHttp: true, hosts: ImageHostsSchema.parse("127.0.0.1,.localhost") };
    expect(parseImageSource("http://127.0.0.1:8080/u.img", lab).ok).toBe(true);
    expect(parseImageSource("http://127.0.0.2/u.img", lab).ok).toBe(false);
    expect(parseImageSource("http://a.localhost/u.img", lab).ok).toBe(false);
  });
});

describe("REIMAGE image", () => {
  it("is a Glance image id or name, never a URL or a path", () => {
    expect(imageIssues("REIMAGE", { image: "ubuntu-24.04" })).toEqual([]);
    expect(glanceImageRefProblem("0190a5b4-3333-7000-8000-000000000001")).toBeUndefined();
    for (const image of ["file:///etc/ironic/ironic.conf", "https://images.example/u.img", "/etc/passwd"])
      expect(imageIssues("REIMAGE", { image }), image).toEqual([
        "must be a Glance image id or name, not a URL or a path (IMAGE_NODE takes an https:// URL with its digest)",
      ]);
  });
});
