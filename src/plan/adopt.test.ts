import { describe, expect, it } from "vitest";
import type { KubeObject } from "../core/index.ts";
import { keepLiveSelector, labelledFor } from "./adopt.ts";
import { hostConflicts } from "./hosts.ts";

const app = { namespace: "team-a", name: "blog" };
const ours = { "plumb.dev/app": "blog", "plumb.dev/app-namespace": "team-a" };

const deployment = (
  selector: Record<string, string>,
  labels: Record<string, string>,
): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "team-a" },
  spec: {
    replicas: 2,
    selector: { matchLabels: selector },
    template: { metadata: { labels }, spec: { containers: [{ name: "web", image: "x" }] } },
  },
});

describe("keepLiveSelector", () => {
  it("keeps the live selector and labels the template so it still matches", () => {
    const desired = deployment(
      { "app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "blog" },
      { "app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "blog" },
    );
    const live = deployment({ app: "web" }, { app: "web" });
    const kept = keepLiveSelector(desired, live);
    expect(kept["spec"]).toEqual({
      replicas: 2,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: {
          labels: {
            "app.kubernetes.io/name": "web",
            "app.kubernetes.io/instance": "blog",
            app: "web",
          },
        },
        spec: { containers: [{ name: "web", image: "x" }] },
      },
    });
    // The desired object itself is not changed.
    expect((desired["spec"] as { selector: unknown }).selector).toEqual({
      matchLabels: { "app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "blog" },
    });
  });

  it("leaves alone equal selectors, kinds whose selector may change, objects without one", () => {
    const d = deployment({ a: "1" }, { a: "1" });
    expect(keepLiveSelector(d, deployment({ a: "1" }, { a: "1", b: "2" }))).toBe(d);
    const svc: KubeObject = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web" },
      spec: { selector: { a: "1" } },
    };
    expect(keepLiveSelector(svc, { ...svc, spec: { selector: { b: "2" } } })).toBe(svc);
    const job: KubeObject = {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: "j" },
      spec: { template: {} },
    };
    expect(
      keepLiveSelector(job, {
        ...job,
        spec: { selector: { matchLabels: { "controller-uid": "u" } } },
      }),
    ).toBe(job);
  });
});

describe("labelledFor", () => {
  it("reads the App's tracking labels", () => {
    const live: KubeObject = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "c",
        labels: ours,
        managedFields: [
          { manager: "kubectl-client-side-apply", operation: "Update" },
          { manager: "kube-controller-manager", operation: "Update", subresource: "status" },
          { manager: "helm", operation: "Update" },
        ],
      },
    };
    expect(labelledFor(live, app)).toBe(true);
    expect(labelledFor(live, { ...app, name: "other" })).toBe(false);
  });
});

describe("hostConflicts", () => {
  const ingress = (ns: string, name: string, hosts: string[], labels = {}): KubeObject => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: ns, labels },
    spec: { rules: hosts.map((host) => ({ host })) },
  });

  it("names every other Ingress already serving a desired host", () => {
    const desired = [ingress("team-a", "web", ["blog.example.com", "www.blog.example.com"])];
    const live = [
      ingress("team-b", "blog", ["Blog.Example.com", "other.example.com"]),
      ingress("team-c", "legacy", ["www.blog.example.com", "www.blog.example.com"]),
      ingress("team-a", "web", ["blog.example.com"]), // the desired object itself
      ingress("team-a", "old-web", ["blog.example.com"], ours), // this App's own
      ingress("team-d", "wild", ["*.example.com"]),
    ];
    expect(hostConflicts(desired, live, app)).toEqual([
      { host: "blog.example.com", ingress: "Ingress team-b/blog" },
      { host: "www.blog.example.com", ingress: "Ingress team-c/legacy" },
    ]);
  });

  it("passes over live Ingresses of odd shapes, and one serving no wanted host", () => {
    const desired = [ingress("team-a", "web", ["blog.example.com"])];
    const odd = (spec: unknown): KubeObject => ({
      ...ingress("team-z", "odd", []),
      spec,
    });
    const live = [
      odd(undefined),
      odd({ rules: "blog.example.com" }),
      odd({ rules: [null, { host: 7 }, { http: {} }] }),
      ingress("team-b", "other", ["other.example.com"]),
      ingress("team-c", "blog", ["BLOG.example.com"]),
    ];
    expect(hostConflicts(desired, live, app)).toEqual([
      { host: "blog.example.com", ingress: "Ingress team-c/blog" },
    ]);
  });

  it("nothing desired, nothing in conflict", () => {
    expect(hostConflicts([], [ingress("x", "y", ["a.example.com"])], app)).toEqual([]);
  });
});
