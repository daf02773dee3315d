import { describe, expect, it } from "vitest";
import {
  decodeExact,
  hmacSha256Hex,
  timingSafeEqual,
  verifyGitea,
  verifyGitHub,
  verifyGitLab,
} from "./verify.ts";

// GitHub's documented test values ("Validating webhook deliveries", "Testing the webhook payload validation").
const DOC_SECRET = "It's a Secret to Everybody";
const DOC_PAYLOAD = "Hello, World!";
const DOC_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

describe("verifyGitHub", () => {
  it("verifies GitHub's documented test vector", async () => {
    expect(await verifyGitHub(DOC_SECRET, DOC_PAYLOAD, DOC_SIGNATURE)).toBe(true);
    expect(`sha256=${await hmacSha256Hex(DOC_SECRET, DOC_PAYLOAD)}`).toBe(DOC_SIGNATURE);
  });

  it("is false, never throwing, for wrong, malformed or missing signatures and empty bodies", async () => {
    expect(await verifyGitHub(DOC_SECRET, "Hello, World?", DOC_SIGNATURE)).toBe(false);
    expect(await verifyGitHub("another", DOC_PAYLOAD, DOC_SIGNATURE)).toBe(false);
    expect(await verifyGitHub(DOC_SECRET, DOC_PAYLOAD, undefined)).toBe(false);
    expect(await verifyGitHub(DOC_SECRET, DOC_PAYLOAD, "sha256=")).toBe(false);
    expect(await verifyGitHub(DOC_SECRET, DOC_PAYLOAD, DOC_SIGNATURE.slice(0, -2))).toBe(false);
    expect(await verifyGitHub(DOC_SECRET, "", DOC_SIGNATURE)).toBe(false);
  });
});

describe("verifyGitea / verifyGitLab", () => {
  it("Gitea: hex HMAC-SHA256 of the body bytes", async () => {
    const body = new TextEncoder().encode(DOC_PAYLOAD);
    expect(await verifyGitea(DOC_SECRET, body, DOC_SIGNATURE.slice("sha256=".length))).toBe(true);
    expect(await verifyGitea(DOC_SECRET, body, DOC_SIGNATURE)).toBe(false);
    expect(await verifyGitea(DOC_SECRET, body, undefined)).toBe(false);
  });

  it("GitLab: the token itself", async () => {
    expect(await verifyGitLab("t0ken", "t0ken")).toBe(true);
    expect(await verifyGitLab("t0ken", "t0ke")).toBe(false);
    expect(await verifyGitLab("t0ken", "")).toBe(false);
    expect(await verifyGitLab("t0ken", undefined)).toBe(false);
  });
});

describe("helpers", () => {
  it("timingSafeEqual compares whole strings", async () => {
    expect(await timingSafeEqual("abc", "abc")).toBe(true);
    expect(await timingSafeEqual("abc", "abcd")).toBe(false);
    expect(await timingSafeEqual("", "")).toBe(true);
  });

  it("decodeExact keeps a BOM and refuses invalid UTF-8", () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]);
    expect(new TextEncoder().encode(decodeExact(bom))).toEqual(bom);
    expect(decodeExact(new Uint8Array([0xc3]))).toBeUndefined();
  });
});
