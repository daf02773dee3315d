// The secret scanner's forms: every way a test spells a secret (and a Basic credential
// user:secret) that plumb must never write, in status, Events, logs, the HTTP API, CLI output
// or Slack. Shared by the redactor's unit tests and the e2e leak tests, so both prove the same
// list. Pure; Web APIs only.

const enc = new TextEncoder();
const bytesOf = (s: string) => enc.encode(s);
const b64 = (s: string) => btoa(String.fromCharCode(...bytesOf(s)));
const url = (s: string) => s.replaceAll("+", "-").replaceAll("/", "_");
const unpad = (s: string) => s.replace(/=+$/, "");
const hex = (s: string) => [...bytesOf(s)].map((b) => b.toString(16).padStart(2, "0")).join("");
const json = (s: string) => JSON.stringify(s).slice(1, -1);
const everyByte = (s: string) =>
  [...bytesOf(s)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join("");
const groups = (s: string, n: number, sep: string) =>
  (s.match(new RegExp(`.{1,${n}}`, "g")) ?? []).join(sep);
const entities = (s: string, radix: 10 | 16) =>
  [...s]
    .map((c) => `&#${radix === 16 ? "x" : ""}${(c.codePointAt(0) ?? 0).toString(radix)};`)
    .join("");
const goQuote = (s: string) =>
  [...bytesOf(s)]
    .map((b) => {
      const c = String.fromCharCode(b);
      if (b < 0x20 || b >= 0x7f) return `\\x${b.toString(16).padStart(2, "0")}`;
      return c === '"' || c === "\\" ? `\\${c}` : c;
    })
    .join("");

/** A form: its name, and the secret (and, for credential forms, user:secret) spelt that way. */
export type SecretForm = [name: string, encode: (secret: string, user: string) => string];

/**
 * The forms of a secret the scanner checks: 40 of them, among them plain, upper and lower case,
 * hex, base64 (standard and URL-safe, with and without padding, at byte offsets 0, 1 and 2 of
 * a longer string), lower- and upper-cased base64, base64 split by spaces and wrapped by
 * newlines, percent-encoded (once, every byte, twice, as a form), JSON-escaped (once, as
 * \u escapes, in JSON, in JSON in JSON), Go's %q, HTML entities, and a Basic credential
 * user:secret in base64, lower-cased, split, in hex and percent-encoded; Bearer; a URL's
 * userinfo and query.
 */
export const SECRET_FORMS: readonly SecretForm[] = [
  ["plain", (s) => s],
  ["upper case", (s) => s.toUpperCase()],
  ["lower case", (s) => s.toLowerCase()],
  ["hex", (s) => hex(s)],
  ["hex, upper case", (s) => hex(s).toUpperCase()],
  ["hex, bytes split by spaces", (s) => groups(hex(s), 2, " ")],
  ["hex, bytes split by colons", (s) => groups(hex(s), 2, ":")],
  ["base64", (s) => b64(s)],
  ["base64 unpadded", (s) => unpad(b64(s))],
  ["base64url", (s) => url(b64(s))],
  ["base64url unpadded", (s) => unpad(url(b64(s)))],
  ["inside base64 at byte offset 0", (s) => b64(`abc${s}xyz!`)],
  ["inside base64 at byte offset 1", (s) => b64(`a${s}--`)],
  ["inside base64 at byte offset 2", (s) => b64(`ab${s}`)],
  ["inside base64url at byte offset 1, unpadded", (s) => unpad(url(b64(`{${s}}`)))],
  ["inside base64url at byte offset 2", (s) => url(b64(`{"${s}"}`))],
  ["base64, lower-cased", (s) => b64(s).toLowerCase()],
  ["base64, upper-cased", (s) => b64(s).toUpperCase()],
  ["base64 split by spaces", (s) => groups(b64(s), 4, " ")],
  ["base64 wrapped by newlines", (s) => groups(b64(s), 8, "\n")],
  ["base64 wrapped by CRLF, lower-cased", (s) => groups(b64(s), 6, "\r\n").toLowerCase()],
  ["base64, percent-encoded (a query value)", (s) => encodeURIComponent(b64(s))],
  ["percent-encoded", (s) => encodeURIComponent(s)],
  ["percent-encoded, every byte", (s) => everyByte(s)],
  ["percent-encoded twice", (s) => encodeURIComponent(encodeURIComponent(s))],
  ["form-encoded", (s) => new URLSearchParams({ v: s }).toString().slice(2)],
  ["JSON-escaped", (s) => json(s)],
  [
    "JSON \\u escapes, every character",
    (s) =>
      [...s]
        .map((c) =>
          c.length === 1 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : json(c),
        )
        .join(""),
  ],
  ["JSON in JSON", (s) => json(json(s))],
  ["JSON in JSON in JSON", (s) => json(json(json(s)))],
  ["Go %q with \\x escapes", (s) => goQuote(s)],
  [
    "HTML entities",
    (s) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll('"', "&quot;"),
  ],
  ["HTML decimal entities, every character", (s) => entities(s, 10)],
  ["HTML hex entities, every character", (s) => entities(s, 16)],
  ["Basic user:secret", (s, u) => `Basic ${b64(`${u}:${s}`)}`],
  ["Basic user:secret, lower-cased", (s, u) => `Basic ${b64(`${u}:${s}`).toLowerCase()}`],
  ["Basic user:secret split by spaces", (s, u) => `Basic ${groups(b64(`${u}:${s}`), 4, " ")}`],
  ["Basic user:secret in hex", (s, u) => hex(`Basic ${b64(`${u}:${s}`)}`)],
  ["Basic user:secret with an unknown user", (s) => `Basic ${b64(`x-access-token:${s}`)}`],
  ["Bearer", (s) => `Authorization: Bearer ${s}`],
  ["a URL's userinfo", (s, u) => `https://${u}:${encodeURIComponent(s)}@git.example/repo.git`],
  ["a URL's query", (s) => `https://git.example/repo.git?access_token=${encodeURIComponent(s)}`],
];
