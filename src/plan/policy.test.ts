import { describe, expect, it } from "vitest";
import type { AppPolicyObject } from "../app/index.ts";
import { clusterIssue, effectivePolicy, settingsNotice, sourceRepoIssue } from "./policy.ts";

const settings = { allowedDestinations: ["dev"], allowedClusterKinds: ["ClusterRole"] };
const none = { allowedDestinations: [], allowedClusterKinds: [] };
const policy = (name: string, spec: unknown): AppPolicyObject => ({ metadata: { name }, spec });
const gitSpec = (url: string) => ({ source: { git: { url } } });

describe("effectivePolicy", () => {
  it("a cluster without AppPolicies (kind not installed, or none) follows the process", () => {
    const want = { destinations: ["dev"], clusterKinds: ["ClusterRole"], invalid: [] };
    expect(effectivePolicy(undefined, "team-a", settings)).toEqual(want);
    expect(effectivePolicy([], "team-a", settings)).toEqual(want);
  });

  it("a policy that selects the namespace decides, whatever the process says", () => {
    const policies = [
      policy("tenants", {
        appNamespaces: ["team-*"],
        destinations: { namespaces: ["shared"], clusters: ["prod-*"] },
        clusterKinds: ["rbac.authorization.k8s.io/ClusterRole"],
        sourceRepos: ["https://git.example.com/team/*"],
      }),
    ];
    expect(effectivePolicy(policies, "team-a", settings)).toEqual({
      source: 'AppPolicy "tenants"',
      destinations: ["shared"],
      clusterKinds: ["rbac.authorization.k8s.io/ClusterRole"],
      clusters: ["prod-*"],
      sourceRepos: ["https://git.example.com/team/*"],
      invalid: [],
    });
  });

  it("a namespace no policy selects follows the process", () => {
    const policies = [policy("tenants", { appNamespaces: ["team-*"] })];
    expect(effectivePolicy(policies, "ops", settings)).toEqual({
      destinations: ["dev"],
      clusterKinds: ["ClusterRole"],
      invalid: [],
    });
  });

  it("several policies grant their union; an absent list in any of them allows any", () => {
    const policies = [
      policy("b", {
        appNamespaces: ["team-a"],
        destinations: { namespaces: ["y", "x"], clusters: ["c1"] },
        sourceRepos: ["https://b/*"],
      }),
      policy("a", {
        appNamespaces: ["*"],
        destinations: { namespaces: ["x"] },
        clusterKinds: ["StorageClass"],
        sourceRepos: ["https://a/*"],
      }),
    ];
    expect(effectivePolicy(policies, "team-a", none)).toEqual({
      source: 'AppPolicies "a", "b"',
      destinations: ["x", "y"],
      clusterKinds: ["StorageClass"],
      sourceRepos: ["https://a/*", "https://b/*"],
      invalid: [],
    });
  });

  it("a policy that does not validate grants nothing and is named", () => {
    const policies = [
      policy("broken", { appNamespaces: ["team-a"], destinations: { namespaces: "dev" } }),
    ];
    expect(effectivePolicy(policies, "team-a", settings)).toEqual({
      source:
        'the default policy (no valid AppPolicy selects namespace "team-a"; AppPolicy "broken" grants nothing: destinations.namespaces: Invalid input: expected array, received string)',
      destinations: [],
      clusterKinds: [],
      invalid: [
        {
          name: "broken",
          message: "destinations.namespaces: Invalid input: expected array, received string",
        },
      ],
    });
  });
});

describe("sourceRepoIssue and clusterIssue", () => {
  const governed = effectivePolicy(
    [
      policy("tenants", {
        appNamespaces: ["team-a"],
        destinations: { clusters: ["staging"] },
        sourceRepos: ["https://git.example.com/team-a/*"],
      }),
    ],
    "team-a",
    none,
  );

  it("a source the policy lists passes; another is refused with both named", () => {
    expect(sourceRepoIssue(gitSpec("https://git.example.com/team-a/app.git"), governed)).toBe(
      undefined,
    );
    expect(sourceRepoIssue(gitSpec("https://git.example.com/team-b/app.git"), governed)).toEqual({
      code: "InvalidSpec",
      path: "spec.source.git",
      message:
        'source "https://git.example.com/team-b/app.git" is not allowed by AppPolicy "tenants" (sourceRepos: https://git.example.com/team-a/*)',
    });
  });

  it("a credential in the URL is neither matched nor repeated", () => {
    const issue = sourceRepoIssue(gitSpec("https://user:s3cret@git.example.com/x.git"), governed);
    expect(issue?.message).toBe(
      'source "https://git.example.com/x.git" is not allowed by AppPolicy "tenants" (sourceRepos: https://git.example.com/team-a/*)',
    );
  });

  it("without sourceRepos or clusters anything goes", () => {
    const open = effectivePolicy(undefined, "team-a", none);
    expect(sourceRepoIssue(gitSpec("https://anywhere/x.git"), open)).toBe(undefined);
    expect(clusterIssue("any", open)).toBe(undefined);
  });

  it("a kubeconfig Secret the policy does not list is refused", () => {
    expect(clusterIssue("staging", governed)).toBe(undefined);
    expect(clusterIssue("prod", governed)).toEqual({
      code: "InvalidSpec",
      path: "spec.destination.cluster.secretRef.name",
      message:
        'cluster Secret "prod" is not allowed by AppPolicy "tenants" (destinations.clusters: staging)',
    });
  });
});

describe("settingsNotice", () => {
  it("says which of the process's settings the policies make inert, and where", () => {
    const policies = [policy("tenants", { appNamespaces: ["team-*"] })];
    const governed = effectivePolicy(policies, "team-a", settings);
    expect(settingsNotice(governed, "team-a", settings)).toBe(
      'PLUMB_ALLOWED_DESTINATIONS=dev and PLUMB_ALLOWED_CLUSTER_KINDS=ClusterRole are ignored for Apps in "team-a": AppPolicy "tenants" governs them',
    );
    const star = { ...none, allowedDestinations: ["*"] };
    expect(settingsNotice(effectivePolicy(policies, "team-a", star), "team-a", star)).toBe(
      'PLUMB_ALLOWED_DESTINATIONS=* is ignored for Apps in "team-a": AppPolicy "tenants" governs them',
    );
    expect(settingsNotice(effectivePolicy(policies, "team-a", none), "team-a", none)).toBe(
      undefined,
    );
    expect(settingsNotice(effectivePolicy(policies, "ops", settings), "ops", settings)).toBe(
      undefined,
    );
    expect(settingsNotice(effectivePolicy(undefined, "team-a", settings), "team-a", settings)).toBe(
      undefined,
    );
  });
});
