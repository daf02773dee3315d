// Throwaway TLS material for tests, made by the real openssl in a temporary directory: a CA, a
// server certificate for 127.0.0.1 and localhost, and a client certificate (CN=plumb-test,
// O=system:masters) signed by that CA. Nothing is committed; every call makes new keys.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  /** A second CA that signed nothing here (for "unknown issuer" cases). */
  otherCa: string;
  remove(): void;
}

/** Makes the PEM files with openssl (EC P-256 keys, valid one day). */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "plumb-pki-"));
  const ssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });
  const key = (name: string) =>
    ssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", name);
  const selfSigned = (name: string, cn: string) => {
    key(`${name}.key`);
    ssl(
      "req",
      "-x509",
      "-new",
      "-key",
      `${name}.key`,
      "-subj",
      `/CN=${cn}`,
      "-days",
      "1",
      "-out",
      `${name}.crt`,
    );
  };
  selfSigned("ca", "plumb-test-ca");
  selfSigned("other-ca", "plumb-other-ca");
  const signed = (name: string, subj: string, ext: string) => {
    key(`${name}.key`);
    ssl("req", "-new", "-key", `${name}.key`, "-subj", subj, "-out", `${name}.csr`);
    writeFileSync(join(dir, `${name}.ext`), ext);
    ssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      `${name}.ext`,
      "-out",
      `${name}.crt`,
    );
  };
  signed(
    "server",
    "/CN=127.0.0.1",
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n",
  );
  signed("client", "/O=system:masters/CN=plumb-test", "extendedKeyUsage=clientAuth\n");
  const read = (f: string) => readFileSync(join(dir, f), "utf8");
  return {
    dir,
    ca: read("ca.crt"),
    serverCert: read("server.crt"),
    serverKey: read("server.key"),
    clientCert: read("client.crt"),
    clientKey: read("client.key"),
    otherCa: read("other-ca.crt"),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
