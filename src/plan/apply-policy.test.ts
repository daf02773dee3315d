import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { applyOnlyIfAbsent, generatedKeys, withGeneratedValues } from "./apply-policy.ts";
import { planPrune } from "./prune.ts";

const secret = (
  annotations: Record<string, string>,
  data?: Record<string, string>,
): KubeObject => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "db", namespace: "a", annotations },
  ...(data ? { data } : {}),
});

describe("apply policy annotations", () => {
  it("IfNotPresent, or a generated key, means apply only when absent", () => {
    expect(applyOnlyIfAbsent(secret({ "plumb.dev/ssa": "IfNotPresent" }))).toBe(true);
    expect(applyOnlyIfAbsent(secret({ "plumb.dev/generate": "password" }))).toBe(true);
    expect(applyOnlyIfAbsent(secret({ "plumb.dev/ssa": "Always" }))).toBe(false);
    expect(applyOnlyIfAbsent(secret({}))).toBe(false);
  });

  it("generated keys: a Secret's listed keys, trimmed, deduplicated, sorted; never on other kinds", () => {
    expect(
      generatedKeys(secret({ "plumb.dev/generate": " token, password,token,, bad key" })),
    ).toEqual(["password", "token"]);
    expect(
      generatedKeys({
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "c", annotations: { "plumb.dev/generate": "x" } },
      }),
    ).toEqual([]);
  });

  it("fills only the generated keys the Secret lacks, base64 as data holds them", () => {
    const filled = withGeneratedValues(
      secret({ "plumb.dev/generate": "password,token" }, { token: "a2VlcA==" }),
      (key) => `${key}-0123`,
    );
    expect(filled["data"]).toEqual({ token: "a2VlcA==", password: btoa("password-0123") });
  });
});

describe("planPrune and plumb.dev/prune: disabled", () => {
  it("never deletes an object annotated prune: disabled; it is dropped from the inventory", () => {
    const app = { namespace: "a", name: "shop" };
    const labels = {
      "plumb.dev/app": "shop",
      "plumb.dev/app-namespace": "a",
    };
    const ref = { apiVersion: "v1", kind: "Secret", namespace: "a", name: "db" };
    const cm = { apiVersion: "v1", kind: "ConfigMap", namespace: "a", name: "cfg" };
    const live = new Map<string, KubeObject>([
      [
        "/Secret/a/db",
        {
          ...secret({ "plumb.dev/prune": "disabled" }),
          metadata: {
            ...secret({}).metadata,
            labels,
            annotations: { "plumb.dev/prune": "disabled" },
          },
        },
      ],
      [
        "/ConfigMap/a/cfg",
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "cfg", namespace: "a", labels } },
      ],
    ]);
    const plan = planPrune({
      inventory: [ref, cm],
      desired: [],
      live,
      claimedByOthers: new Set(),
      app,
    });
    expect(plan.delete).toEqual([cm]);
    expect(plan.skip).toEqual([
      {
        ref,
        reason: "Secret a/db is not pruned: annotated plumb.dev/prune: disabled",
        keep: false,
      },
    ]);
  });
});
