// cert-manager Certificates through their life: first issuance, renewal, a renewal that fails,
// expiry. The renewal's conditions are those an Argo CD user reported from a cluster
// (cert-manager v1.14), where Argo CD calls the certificate Progressing while it serves.
import { describe, expect, it } from "vitest";
import { type KubeObject, refKey, refOf } from "../core/index.ts";
import { assessSet } from "./assess.ts";
import { assessHealth } from "./index.ts";

const NOW = new Date("2024-06-09T00:00:00Z");

const READY = {
  lastTransitionTime: "2024-04-09T23:38:04Z",
  message: "Certificate is up to date and has not expired",
  observedGeneration: 1,
  reason: "Ready",
  status: "True",
  type: "Ready",
};
const RENEWING = {
  lastTransitionTime: "2024-06-08T22:38:03Z",
  message: "Renewing certificate as renewal was scheduled at 2024-06-08 22:38:03 +0000 UTC",
  observedGeneration: 1,
  reason: "Renewing",
  status: "True",
  type: "Issuing",
};
const RENEWAL_FAILED = {
  lastTransitionTime: "2024-06-08T22:38:09Z",
  message:
    'The certificate request has failed to complete and will be retried: Failed to wait for order resource "web-tls-1-2317276124" to become ready: order is in "errored" state: Failed to create Order: 429 urn:ietf:params:acme:error:rateLimited',
  observedGeneration: 1,
  reason: "Failed",
  status: "False",
  type: "Issuing",
};

function certificate(
  conditions: object[],
  extra: { generation?: number; notAfter?: string; apiVersion?: string } = {},
): KubeObject {
  return {
    apiVersion: extra.apiVersion ?? "cert-manager.io/v1",
    kind: "Certificate",
    metadata: { name: "web-tls", namespace: "team-a", generation: extra.generation ?? 1 },
    spec: {
      secretName: "web-tls",
      dnsNames: ["web.example.com"],
      issuerRef: { kind: "ClusterIssuer", name: "letsencrypt" },
    },
    status: {
      conditions,
      notAfter: extra.notAfter ?? "2024-07-08T22:38:03Z",
      notBefore: "2024-04-09T22:38:03Z",
      renewalTime: "2024-06-08T22:38:03Z",
    },
  };
}

describe("cert-manager.io/Certificate", () => {
  it("being renewed (Ready=True, Issuing=True) serves its current certificate: Healthy", () => {
    expect(assessHealth(certificate([READY, RENEWING]), NOW)).toEqual({
      status: "Healthy",
      message:
        "Certificate is up to date and has not expired; renewing: Renewing: Renewing certificate as renewal was scheduled at 2024-06-08 22:38:03 +0000 UTC",
    });
    // Whichever order cert-manager lists them in.
    expect(assessHealth(certificate([RENEWING, READY]), NOW).status).toBe("Healthy");
  });

  it("whose renewal failed and waits to retry still serves: Healthy, the failure in the message", () => {
    expect(assessHealth(certificate([READY, RENEWAL_FAILED]), NOW)).toEqual({
      status: "Healthy",
      message: `Certificate is up to date and has not expired; renewal failed, retried later: Failed: ${RENEWAL_FAILED.message}`,
    });
  });

  it("past notAfter serves no more: Degraded, renewing or not, whatever Ready still says", () => {
    for (const conditions of [[READY], [READY, RENEWING], [READY, RENEWAL_FAILED]]) {
      expect(
        assessHealth(certificate(conditions, { notAfter: "2024-06-08T23:59:59Z" }), NOW),
      ).toEqual({
        status: "Degraded",
        message: "certificate expired at 2024-06-08T23:59:59Z",
      });
    }
  });

  it("re-issued for a changed spec (Ready for the older generation): Progressing", () => {
    const changed = certificate([READY, { ...RENEWING, reason: "Reissuing" }], { generation: 2 });
    expect(assessHealth(changed, NOW)).toEqual({
      status: "Progressing",
      message: `issuing: Reissuing: ${RENEWING.message}`,
    });
  });

  it("issued for the first time (Ready=False, Issuing=True): Progressing; failed: Degraded", () => {
    const first = {
      ...READY,
      status: "False",
      reason: "DoesNotExist",
      message: "Issuing certificate as Secret does not exist",
    };
    expect(
      assessHealth(certificate([first, { ...RENEWING, reason: "DoesNotExist" }]), NOW),
    ).toEqual({
      status: "Progressing",
      message: `issuing: DoesNotExist: ${RENEWING.message}`,
    });
    expect(assessHealth(certificate([first, RENEWAL_FAILED]), NOW).status).toBe("Degraded");
  });

  it("of the certmanager.k8s.io API (no Issuing condition) follows the same rule", () => {
    const legacy = { apiVersion: "certmanager.k8s.io/v1alpha1" };
    expect(assessHealth(certificate([READY], legacy), NOW).status).toBe("Healthy");
    expect(
      assessHealth(certificate([READY], { ...legacy, notAfter: "2024-01-01T00:00:00Z" }), NOW)
        .status,
    ).toBe("Degraded");
  });

  it("leaves the App Healthy while its certificate renews", () => {
    const cert = certificate([READY, RENEWING]);
    const secret: KubeObject = {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "web-tls", namespace: "team-a" },
    };
    const refs = [cert, secret].map(refOf);
    const live = new Map([cert, secret].map((o) => [refKey(refOf(o)), o]));
    const set = assessSet(refs, live, NOW);
    expect([set.status, set.reason]).toEqual(["Healthy", "all 2 objects healthy"]);
  });
});
