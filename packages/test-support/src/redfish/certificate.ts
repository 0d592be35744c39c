/**
 * A self-signed certificate for test BMCs on loopback addresses, made by the openssl CLI: the
 * PEM text for the server, and the file a client (Ironic's redfish_verify_ca) trusts it from.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TestCertificate {
  cert: string;
  key: string;
  /** The certificate as a file: the CA bundle a client verifies the BMCs with. */
  caFile: string;
  /** The folder holding it (the caller removes it). */
  dir: string;
}

/** A certificate valid for a day for these IP addresses (its own CA). */
export async function selfSignedCertificate(ips: string[]): Promise<TestCertificate> {
  const dir = await mkdtemp(join(tmpdir(), "bmc-tls-"));
  const caFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=Fleet Manager test BMC",
    "-addext",
    `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(",")}`,
    "-keyout",
    keyFile,
    "-out",
    caFile,
  ]);
  return { cert: await readFile(caFile, "utf8"), key: await readFile(keyFile, "utf8"), caFile, dir };
}
