import { describe, expect, it } from "vitest";
import { parseRuntimeConfig } from "./config.ts";

const dns = {
  PLUMB_CLOUDFLARE_API_TOKEN: "cf-token-0123456789abcdefghij",
  PLUMB_CLOUDFLARE_ZONE_ID: "0123456789abcdef0123456789abcdef",
  PLUMB_DNS_ZONE: "example.com",
  PLUMB_DNS_TARGET: "203.0.113.7",
};

describe("parseRuntimeConfig", () => {
  it("defaults: no ingress settings, no DNS", () => {
    expect(parseRuntimeConfig({})).toEqual({
      allowedDestinations: [],
      allowedClusterKinds: [],
      allowCascadingPrune: false,
      concurrency: 4,
      ingress: {},
      allowInsecureDestinations: false,
      maxRunMemory: 512 * 1024 * 1024,
    });
    expect(parseRuntimeConfig({ PLUMB_INGRESS_CLASS: "", PLUMB_DNS_ZONE: "" }).dns).toBeUndefined();
  });

  it("PLUMB_ALLOW_INSECURE_DESTINATIONS: true or false, nothing else", () => {
    expect(
      parseRuntimeConfig({ PLUMB_ALLOW_INSECURE_DESTINATIONS: "true" }).allowInsecureDestinations,
    ).toBe(true);
    expect(() => parseRuntimeConfig({ PLUMB_ALLOW_INSECURE_DESTINATIONS: "yes" })).toThrow(
      'PLUMB_ALLOW_INSECURE_DESTINATIONS: must be "true" or "false"',
    );
  });

  it("PLUMB_ALLOW_CASCADING_PRUNE is true or false, never a repository's choice", () => {
    expect(parseRuntimeConfig({ PLUMB_ALLOW_CASCADING_PRUNE: "true" }).allowCascadingPrune).toBe(
      true,
    );
    expect(parseRuntimeConfig({ PLUMB_ALLOW_CASCADING_PRUNE: "false" }).allowCascadingPrune).toBe(
      false,
    );
    expect(() => parseRuntimeConfig({ PLUMB_ALLOW_CASCADING_PRUNE: "yes" })).toThrow(
      "PLUMB_ALLOW_CASCADING_PRUNE: must be true or false",
    );
  });

  it("PLUMB_RENDER_TIMEOUT: a duration like an App's interval, in ms; anything else is refused", () => {
    expect(parseRuntimeConfig({}).renderTimeoutMs).toBeUndefined();
    expect(parseRuntimeConfig({ PLUMB_RENDER_TIMEOUT: "45s" }).renderTimeoutMs).toBe(45_000);
    expect(parseRuntimeConfig({ PLUMB_RENDER_TIMEOUT: "1m30s" }).renderTimeoutMs).toBe(90_000);
    for (const bad of ["10", "0s", "soon"]) {
      expect(() => parseRuntimeConfig({ PLUMB_RENDER_TIMEOUT: bad })).toThrow(
        'PLUMB_RENDER_TIMEOUT: must be a duration such as "15s" or "1m"',
      );
    }
  });

  it("PLUMB_MAX_RUN_MEMORY: bytes as a Kubernetes quantity, at least 64Mi", () => {
    const bytes = (v: string) => parseRuntimeConfig({ PLUMB_MAX_RUN_MEMORY: v }).maxRunMemory;
    expect(bytes("256Mi")).toBe(268_435_456);
    expect(bytes("1Gi")).toBe(1_073_741_824);
    expect(bytes("600M")).toBe(600_000_000);
    expect(bytes("65536Ki")).toBe(67_108_864);
    expect(bytes("100000000")).toBe(100_000_000);
    for (const bad of ["63Mi", "0.5Gi", "512MB", "-1Gi", "lots", ""]) {
      expect(() => parseRuntimeConfig({ PLUMB_MAX_RUN_MEMORY: bad })).toThrow(
        'PLUMB_MAX_RUN_MEMORY: must be a byte quantity of at least 64Mi, such as "512Mi" or "1Gi"',
      );
    }
  });

  it("reads the ingress class and cert-manager issuer", () => {
    expect(
      parseRuntimeConfig({ PLUMB_INGRESS_CLASS: "nginx", PLUMB_CLUSTER_ISSUER: "letsencrypt-prod" })
        .ingress,
    ).toEqual({ ingressClassName: "nginx", clusterIssuer: "letsencrypt-prod" });
  });

  it.each([
    ["203.0.113.7", "A"],
    ["2001:db8::7", "AAAA"],
    ["lb.example.net", "CNAME"],
  ])("a DNS target %s makes %s records", (target, type) => {
    expect(parseRuntimeConfig({ ...dns, PLUMB_DNS_TARGET: target }).dns).toEqual({
      apiToken: dns.PLUMB_CLOUDFLARE_API_TOKEN,
      zoneId: dns.PLUMB_CLOUDFLARE_ZONE_ID,
      zone: "example.com",
      target,
      type,
      proxied: false,
    });
  });

  it.each([
    [{ PLUMB_INGRESS_CLASS: "Nginx!" }, "PLUMB_INGRESS_CLASS: must be the name of an IngressClass"],
    [
      { PLUMB_CLUSTER_ISSUER: "a_b" },
      "PLUMB_CLUSTER_ISSUER: must be the name of a cert-manager ClusterIssuer",
    ],
    [
      { ...dns, PLUMB_CLOUDFLARE_ZONE_ID: "zone" },
      "PLUMB_CLOUDFLARE_ZONE_ID: must be a zone id (32 lower-case hex characters)",
    ],
    [
      { ...dns, PLUMB_DNS_TARGET: "http://lb" },
      "PLUMB_DNS_TARGET: must be an IPv4 or IPv6 address or a host name",
    ],
    [{ ...dns, PLUMB_DNS_PROXIED: "yes" }, "PLUMB_DNS_PROXIED: must be true or false"],
    [
      { PLUMB_DNS_ZONE: "example.com", PLUMB_DNS_TARGET: "203.0.113.7" },
      "PLUMB_CLOUDFLARE_API_TOKEN, PLUMB_CLOUDFLARE_ZONE_ID: required with PLUMB_DNS_ZONE, PLUMB_DNS_TARGET (DNS records)",
    ],
  ])("refuses %j", (env, message) => {
    expect(() => parseRuntimeConfig(env)).toThrow(message);
  });

  it("never echoes the API token in an error", () => {
    const token = "short token with spaces";
    let message = "";
    try {
      parseRuntimeConfig({ ...dns, PLUMB_CLOUDFLARE_API_TOKEN: token });
    } catch (err) {
      message = String(err);
    }
    expect(message).toBe(
      "Error: PLUMB_CLOUDFLARE_API_TOKEN: must be a Cloudflare API token (20 to 200 visible characters)",
    );
    expect(message).not.toContain(token);
  });

  it("PLUMB_KUBE_QPS and PLUMB_KUBE_BURST: the per-process rate limit, burst 2 × QPS by default", () => {
    expect(parseRuntimeConfig({}).kubeRateLimit).toBeUndefined();
    expect(parseRuntimeConfig({ PLUMB_KUBE_QPS: "50" }).kubeRateLimit).toEqual({
      qps: 50,
      burst: 100,
    });
    expect(
      parseRuntimeConfig({ PLUMB_KUBE_QPS: "2.5", PLUMB_KUBE_BURST: "300" }).kubeRateLimit,
    ).toEqual({ qps: 2.5, burst: 300 });
    expect(() => parseRuntimeConfig({ PLUMB_KUBE_QPS: "0" })).toThrow(
      "PLUMB_KUBE_QPS: must be a positive number of requests a second",
    );
    expect(() => parseRuntimeConfig({ PLUMB_KUBE_QPS: "5", PLUMB_KUBE_BURST: "0" })).toThrow(
      "PLUMB_KUBE_BURST: must be a positive integer",
    );
    expect(() => parseRuntimeConfig({ PLUMB_KUBE_BURST: "10" })).toThrow(
      "PLUMB_KUBE_BURST: required with PLUMB_KUBE_QPS (the rate limit)",
    );
  });
});
