import { describe, expect, it } from "vitest";
import { SECRET_FORMS } from "../../test/support/secret-forms.ts";
import {
  MAX_SECRET_VALUES,
  MIN_SECRET_LENGTH,
  maskSecretValues,
  REDACTED,
  Redactor,
  shortCredential,
} from "./redact.ts";
import { decodedViews, MAX_VIEWS } from "./text-views.ts";

const TOKEN = "ghp_s3cr3t-T0ken/with+odd=chars";
const PASSWORD = 'pä$$ "wörd" \\ 🔑';

const USER = "deploy";
const enc = new TextEncoder();
const bytes = (s: string) => enc.encode(s);
const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const b64url = (b: Uint8Array) => b64(b).replaceAll("+", "-").replaceAll("/", "_");
const json = (s: string) => JSON.stringify(s);

const SECRETS = [
  TOKEN,
  PASSWORD,
  "plain-password-1234",
  "with space & <tag> \"q\" 'a' /x \n\t end",
  "\\\\server\\share\\",
  "ünïcødé-κλειδί-鍵-🔐🔐",
  "abcdef",
];

describe("Redactor.redact", () => {
  it(`the scanner has at least 24 forms (${SECRET_FORMS.length}), each spelling a secret differently`, () => {
    expect(SECRET_FORMS.length).toBeGreaterThanOrEqual(24);
    const changed = 'Pä$$ "Wörd" & <x> \\ 🔑/+=???~~~';
    const spelt = SECRET_FORMS.map(([, encode]) => encode(changed, USER));
    expect(new Set(spelt).size).toBe(SECRET_FORMS.length);
  });

  describe.each(SECRETS)("secret %j", (secret) => {
    // Only the secret is registered: a Basic credential's user is found without being known.
    it.each(SECRET_FORMS)("%s", (_, encode) => {
      const encoded = encode(secret, USER);
      const text = `before ${encoded} after`;
      const out = new Redactor([secret]).redact(text);
      expect(out).toContain(REDACTED);
      expect(out).not.toContain(encoded);
      expect(out.startsWith("before ")).toBe(true);
      expect(out).toMatch(/ after$/);
    });
  });

  it.each(SECRET_FORMS)(
    "%s: redacted inside JSON, and as a whole when user:secret is registered",
    (_, encode) => {
      const r = new Redactor().addCredentials({ username: USER, token: TOKEN });
      const encoded = encode(TOKEN, USER);
      const body = JSON.stringify({ message: `ERR access denied (you sent ${encoded})` });
      const out = r.redact(body);
      expect(out).toContain(REDACTED);
      expect(out).not.toContain(JSON.stringify(encoded).slice(1, -1));
      expect(out.startsWith('{"message":"ERR access denied (you sent ')).toBe(true);
      expect(out.endsWith(')"}')).toBe(true);
    },
  );

  it("catches random secrets in every encoding (200 seeded cases)", () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const pool = [..."aZ09-_.~+/=%&<>\"' \\\n\tµé€鍵🔑"];
    for (let k = 0; k < 200; k++) {
      const secret = Array.from({ length: 6 + rand(20) }, () => pool[rand(pool.length)]).join("");
      if (secret.trim().length < MIN_SECRET_LENGTH) continue;
      const r = new Redactor([secret]);
      for (const [name, encode] of SECRET_FORMS) {
        const encoded = encode(secret, USER);
        const out = r.redact(`<${encoded}>`);
        expect({ name, secret, out: out.includes(encoded) }).toEqual({ name, secret, out: false });
      }
    }
  });

  it("redacts a Basic Authorization header of username:password and of a token's default user", () => {
    const r = new Redactor().addCredentials({ username: "deploy", password: PASSWORD });
    const header = `Basic ${b64(bytes(`deploy:${PASSWORD}`))}`;
    expect(r.redact(`Authorization: ${header}`)).toBe(`Authorization: Basic ${REDACTED}`);
    // Only the token is known; the username the Git port adds is not: the aligned core catches it.
    const t = new Redactor().addCredentials({ token: TOKEN });
    const out = t.redact(`Basic ${b64(bytes(`x-access-token:${TOKEN}`))}`);
    expect(out).toContain(REDACTED);
    expect(out.length).toBeLessThan(`Basic ${b64(bytes(`x-access-token:${TOKEN}`))}`.length);
  });

  it("redacts a value with a trailing newline (a Secret made from a file) without it", () => {
    const r = new Redactor([`${TOKEN}\n`]);
    expect(r.redact(`token ${TOKEN} rejected`)).toBe(`token ${REDACTED} rejected`);
  });

  it("redacts binary Secret data (not UTF-8) in base64", () => {
    const raw = new Uint8Array([0xff, 0xfe, 0x00, 0x80, 0x81, 0x82, 0x83, 0x84]);
    const r = new Redactor().addSecretsOf([
      { apiVersion: "v1", kind: "Secret", metadata: { name: "bin" }, data: { k: b64(raw) } },
    ]);
    expect(r.redact(`data.k: ${b64(raw)}`)).toBe(`data.k: ${REDACTED}`);
    expect(r.redact(`k=${b64url(raw)}`)).toBe(`k=${REDACTED}`);
  });

  it("leaves text without secrets untouched, and an empty redactor is the identity", () => {
    const r = new Redactor([TOKEN]);
    expect(r.redact("Deployment team-a/web: 1 of 2 replicas available")).toBe(
      "Deployment team-a/web: 1 of 2 replicas available",
    );
    expect(new Redactor().redact(TOKEN)).toBe(TOKEN);
    expect(new Redactor([""]).size).toBe(0);
  });

  it("hostile text (runs of backslashes, every escape at once) is read in a bounded number of views", () => {
    const r = new Redactor(["\\\\a\\\\\\b\\\\\\\\c\\d\\"]);
    const text = "\\".repeat(200_000);
    expect(r.redact(text)).toBe(text);
    const everything =
      "\\u0025%25+&amp;\\x41%2B&#x26;".repeat(2_000) + "4142434445464748".repeat(4);
    expect(decodedViews(everything).length).toBeLessThanOrEqual(MAX_VIEWS);
    expect(decodedViews("plain words, nothing to undo")).toHaveLength(1);
  });
});

describe("what is left of a secret where a text was cut", () => {
  const r = new Redactor().addCredentials({ username: USER, token: TOKEN });
  const basic = b64(bytes(`${USER}:${TOKEN}`));

  it.each([
    ["before an ellipsis", `token ${TOKEN.slice(0, 9)}… (cut)`, `token ${REDACTED}… (cut)`],
    ["before three dots", `token ${TOKEN.slice(0, 5)}...`, `token ${REDACTED}...`],
    ["a Basic credential's base64", `Basic ${basic.slice(0, 12)}…`, `Basic ${REDACTED}…`],
    [
      "at the end of a text long enough to have been cut",
      `${"x".repeat(130)} you sent ${TOKEN.slice(0, 7)}`,
      `${"x".repeat(130)} you sent ${REDACTED}`,
    ],
    ["percent-encoded, then cut", `u=${encodeURIComponent(TOKEN).slice(0, 14)}…`, `u=${REDACTED}…`],
  ])("%s", (_, text, want) => {
    expect(r.redact(text)).toBe(want);
  });

  it("a short text's end, and a start shorter than 4 characters, stay", () => {
    expect(r.redact(`token ${TOKEN.slice(0, 7)}`)).toBe(`token ${TOKEN.slice(0, 7)}`);
    expect(r.redact(`token ${TOKEN.slice(0, 3)}…`)).toBe(`token ${TOKEN.slice(0, 3)}…`);
  });
});

describe("no false positives", () => {
  it("text with hashes, SHAs, images and words stays as it is with 1,000 Apps' secrets registered", () => {
    const r = new Redactor();
    for (let i = 0; i < 1_000; i++) {
      r.addCredentials({ username: "deploy", token: `glpat-${i}-Qz9/x+Kp7mW2v` });
      r.add(`db-password-${i}`).add(bytes(`binary-${i}-\u0000\u0001`));
    }
    const text = [
      "Deployment team-a/web: 3 of 3 replicas updated and available",
      "revision 4b125f2a7d61958439e855c592f7af68dd75aa00 applied: 40 objects, Healthy",
      "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
      "image ghcr.io/stefanprodan/podinfo:6.7.1@sha256:0123456789abcdef0123456789abcdef",
      "ConfigMap team-a/web-component-10: data.config.yaml; YWJjZGVmZ2hpamtsbW5vcA== kept",
      "could not read from https://git.example/team/app.git: timed out after 30000 ms ...",
      `${"a long message about replicas and rollouts ".repeat(4)}latest`,
    ];
    for (const line of text) expect(r.redact(line)).toBe(line);
  });
});

describe("MAX_SECRET_VALUES", () => {
  it("keeps the most recently registered values", () => {
    const r = new Redactor(["first-secret", "second-secret"]);
    for (let i = 0; i < MAX_SECRET_VALUES - 2; i++) r.add(`filler-${i}`);
    r.add("first-secret"); // registered again by a later run: the newest now
    r.add("one-more-secret"); // pushes out the oldest, "second-secret"
    expect(r.size).toBe(MAX_SECRET_VALUES);
    expect(r.redact("first-secret second-secret one-more-secret")).toBe(
      `${REDACTED} second-secret ${REDACTED}`,
    );
  });
});

describe(`values shorter than MIN_SECRET_LENGTH (${MIN_SECRET_LENGTH})`, () => {
  const r = new Redactor(["42", "true", "abc"]);

  it.each([
    ["bare words stay", "3 of 42 replicas, ready=true, abc", "3 of 42 replicas, ready=true, abc"],
    ["a value quoted whole goes", 'Invalid value: "abc": bad', `Invalid value: "${REDACTED}": bad`],
    ["single quotes", "value 'true' refused", `value '${REDACTED}' refused`],
    [
      "escaped quotes (JSON in JSON)",
      '{"msg":"port \\"42\\""}',
      `{"msg":"port \\"${REDACTED}\\""}`,
    ],
    ["base64 between quotes", 'data: "YWJj"', `data: "${REDACTED}"`],
    ["a longer quoted word stays", '"abcd" and "42x"', '"abcd" and "42x"'],
  ])("%s", (_, text, want) => {
    expect(r.redact(text)).toBe(want);
  });
});

describe("Redactor.addSecretsOf", () => {
  it("takes data (decoded and as written) and stringData of v1 Secrets only", () => {
    const r = new Redactor().addSecretsOf([
      {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "db" },
        data: { password: b64(bytes("hunter2-hunter2")) },
        stringData: { url: "postgres://app:pw-12345678@db:5432/app" },
      },
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { x: "not-a-secret" } },
      { apiVersion: "example.com/v1", kind: "Secret", data: { x: "also-not-one" } },
      null,
      "text",
    ]);
    expect(r.redact("hunter2-hunter2 / aHVudGVyMi1odW50ZXIy / pw-12345678")).not.toMatch(
      /hunter2|aHVudGVyMi1odW50ZXIy/,
    );
    expect(r.redact("postgres://app:pw-12345678@db:5432/app")).toBe(REDACTED);
    expect(r.redact("not-a-secret also-not-one")).toBe("not-a-secret also-not-one");
  });

  it("the issue's example: an apply error echoing a wrongly typed stringData value", () => {
    const secret = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "api", namespace: "team-a" },
      stringData: { token: 8675309123, nested: { deeper: ["s3cr3t-in-a-list"] } },
    };
    const r = new Redactor().addSecretsOf([secret]);
    // What kube-apiserver's server-side apply answers for a number where a string belongs.
    const message =
      "failed to create typed patch object (team-a/api; /v1, Kind=Secret): .stringData.token: expected string, got &value.valueUnstructured{Value:8675309123}";
    expect(r.redact(message)).toBe(
      `failed to create typed patch object (team-a/api; /v1, Kind=Secret): .stringData.token: expected string, got &value.valueUnstructured{Value:${REDACTED}}`,
    );
    expect(r.redact('.stringData.nested: ["s3cr3t-in-a-list"]')).toBe(
      `.stringData.nested: ["${REDACTED}"]`,
    );
  });
});

describe("Redactor.redactValue", () => {
  it("redacts every string of a status-like value, keys included, and keeps other types", () => {
    const r = new Redactor([TOKEN]);
    const status = {
      conditions: [{ type: "Ready", status: "False", message: `auth ${TOKEN} refused` }],
      drift: { [`data.${TOKEN}`]: { desired: json(TOKEN), live: 3, ok: false, none: null } },
    };
    expect(r.redactValue(status)).toEqual({
      conditions: [{ type: "Ready", status: "False", message: `auth ${REDACTED} refused` }],
      drift: { [`data.${REDACTED}`]: { desired: `"${REDACTED}"`, live: 3, ok: false, none: null } },
    });
    expect(status.conditions[0]?.message).toContain(TOKEN); // a copy, not in place
  });
});

describe("shortCredential", () => {
  it.each([
    [{ token: "abcde" }, "token"],
    [{ token: "  abcde\n" }, "token"],
    [{ username: "git", password: "pw" }, "password"],
    [{ token: "abcdef" }, undefined],
    [{ username: "a", password: "abcdef" }, undefined],
    [{}, undefined],
    [undefined, undefined],
  ])("%j → %s", (creds, want) => {
    expect(shortCredential(creds)).toBe(want);
  });
});

describe("maskSecretValues", () => {
  const secret = (extra: Record<string, unknown>) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "db",
      annotations: {
        "kubectl.kubernetes.io/last-applied-configuration": '{"data":{"password":"c2VjcmV0"}}',
        team: "a",
      },
    },
    ...extra,
  });

  it("masks each distinct value of a key with its own run of +, as Argo CD does", () => {
    const [live, desired] = maskSecretValues([
      secret({ data: { password: "b2xk", user: "YXBw", gone: "eA==" } }),
      secret({ data: { user: "YXBw" }, stringData: { password: "new-one", added: "y" } }),
    ]);
    expect(live).toEqual({
      ...secret({}),
      metadata: { name: "db", annotations: { team: "a" } },
      data: { password: "++++++++", user: "++++++++", gone: "++++++++" },
    });
    expect(desired).toEqual({
      ...secret({}),
      metadata: { name: "db", annotations: { team: "a" } },
      data: { user: "++++++++", password: "++++++++++++", added: "++++++++" },
    });
  });

  it("folds stringData into data first: the same value written either way is the same mask", () => {
    const [live, desired] = maskSecretValues<Record<string, unknown>>([
      secret({ data: { password: btoa("same-value") } }),
      secret({ stringData: { password: "same-value" } }),
    ]);
    expect(live?.["data"]).toEqual({ password: "++++++++" });
    expect(desired?.["data"]).toEqual({ password: "++++++++" });
  });

  it("leaves other objects and absent ones as they are", () => {
    const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "1" } };
    expect(maskSecretValues([cm, undefined])).toEqual([cm, undefined]);
  });
});
