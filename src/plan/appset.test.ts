import { describe, expect, it } from "vitest";
import { AppSetSpec } from "../app/appset.ts";
import {
  APPSET_HASH_ANNOTATION,
  type AppSetRef,
  appSetStatus,
  branchSlug,
  desiredApps,
  directoryParams,
  type ExistingApp,
  matchDirectories,
  planAppSet,
  pullRequestParams,
  substitute,
  withLabels,
} from "./appset.ts";

const SET: AppSetRef = { name: "guestbook", namespace: "team", uid: "uid-1", generation: 3 };
const NOW = new Date("2026-01-02T03:04:05Z");

const template = AppSetSpec.parse({
  generators: [{ list: { elements: [] } }],
  template: {
    metadata: { name: "gb-{{path.basename}}", labels: { env: "{{path.basename}}" } },
    spec: { source: { git: { url: "https://git.example/r.git", path: "{{path}}" } } },
  },
}).template;

function owned(name: string, hash?: string, uid = SET.uid): ExistingApp {
  return {
    metadata: {
      name,
      annotations: hash ? { [APPSET_HASH_ANNOTATION]: hash } : {},
      ownerReferences: [
        {
          apiVersion: "plumb.dev/v1alpha1",
          kind: "AppSet",
          name: "guestbook",
          uid,
          controller: true,
        },
      ],
    },
  };
}

describe("substitution (Argo CD fasttemplate)", () => {
  it("replaces trimmed tags and keeps tags without a parameter", () => {
    expect(substitute("a-{{ x }}-{{y}}-{{z}}", { x: "1", y: "2" })).toBe("a-1-2-{{z}}");
  });
  it("gives a directory's path, basename and normalized basename", () => {
    expect(directoryParams("apps/Web_UI")).toEqual({
      path: "apps/Web_UI",
      "path.basename": "Web_UI",
      "path.basenameNormalized": "web-ui",
    });
  });
  it("slugs a branch as Argo CD's branch_slug", () => {
    expect(branchSlug("Feature/New_Login!")).toBe("feature-new-login");
    expect(branchSlug("x".repeat(60))).toHaveLength(50);
  });
  it("gives a pull request's number, branch and short SHAs", () => {
    const sha = "0123456789abcdef0123456789abcdef01234567";
    expect(pullRequestParams({ number: 7, branch: "fix/a", headSha: sha, labels: [] })).toEqual({
      number: "7",
      branch: "fix/a",
      branch_slug: "fix-a",
      head_sha: sha,
      head_short_sha: "01234567",
      head_short_sha_7: "0123456",
    });
  });
  it("keeps pull requests carrying every label asked for", () => {
    const prs = [
      { number: 1, branch: "a", headSha: "1", labels: ["preview", "x"] },
      { number: 2, branch: "b", headSha: "2", labels: ["x"] },
    ];
    expect(withLabels(prs, ["preview"]).map((p) => p.number)).toEqual([1]);
    expect(withLabels(prs, undefined)).toHaveLength(2);
  });
});

describe("matchDirectories", () => {
  it("includes by glob, '*' not crossing '/', and drops excluded ones", () => {
    const dirs = ["apps", "apps/a", "apps/b", "apps/b/deep", "apps/skip", "other"];
    expect(
      matchDirectories(dirs, [{ path: "apps/*" }, { path: "apps/skip", exclude: true }]),
    ).toEqual(["apps/a", "apps/b"]);
  });
});

describe("desiredApps", () => {
  it("makes one App per parameter set, owned by the AppSet, labelled, checked by the App schema", () => {
    const r = desiredApps(SET, template, [directoryParams("apps/a"), directoryParams("apps/b")]);
    if (!r.ok) throw new Error(r.errors.join());
    expect(r.apps.map((a) => a.metadata.name)).toEqual(["gb-a", "gb-b"]);
    const a = r.apps[0]!;
    expect(a.metadata.namespace).toBe("team");
    expect(a.metadata.labels).toEqual({ env: "a", "plumb.dev/appset": "guestbook" });
    expect(a.metadata.ownerReferences).toEqual([
      {
        apiVersion: "plumb.dev/v1alpha1",
        kind: "AppSet",
        name: "guestbook",
        uid: "uid-1",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(a.spec).toEqual({
      source: { git: { url: "https://git.example/r.git", path: "apps/a" } },
    });
    expect(a.metadata.annotations[APPSET_HASH_ANNOTATION]).toMatch(/^[0-9a-f]{8}$/);
    expect(r.apps[1]!.metadata.annotations[APPSET_HASH_ANNOTATION]).not.toBe(
      a.metadata.annotations[APPSET_HASH_ANNOTATION],
    );
  });
  it("refuses a name that is no object name, a duplicate name and a spec the App schema refuses", () => {
    const bad = { ...template, metadata: { name: "gb-{{nope}}" } };
    const r1 = desiredApps(SET, bad, [directoryParams("apps/a")]);
    expect(r1.ok).toBe(false);
    if (!r1.ok) expect(r1.errors[0]).toContain('App name "gb-{{nope}}" is not a valid object name');
    const fixed = { ...template, metadata: { name: "same" } };
    const r2 = desiredApps(SET, fixed, [directoryParams("a"), directoryParams("b")]);
    expect(r2.ok).toBe(false);
    if (!r2.ok)
      expect(r2.errors).toEqual([expect.stringContaining('"same" is made by more than one')]);
    const wrong = { ...template, spec: { source: { git: { url: 42 } } } };
    const r3 = desiredApps(SET, wrong, [directoryParams("a")]);
    expect(r3.ok).toBe(false);
    if (!r3.ok) expect(r3.errors[0]).toContain("spec.source.git.url");
  });
});

describe("planAppSet", () => {
  const want = desiredApps(SET, template, ["apps/a", "apps/b", "apps/c"].map(directoryParams));
  if (!want.ok) throw new Error("template");
  const hash = (n: string) =>
    want.apps.find((a) => a.metadata.name === n)!.metadata.annotations[APPSET_HASH_ANNOTATION];

  it("creates missing Apps, updates changed ones, leaves equal ones and deletes vanished ones", () => {
    const existing = [owned("gb-a", hash("gb-a")), owned("gb-b", "old"), owned("gb-gone")];
    const plan = planAppSet(SET, want.apps, existing, "delete");
    expect(plan.create.map((a) => a.metadata.name)).toEqual(["gb-c"]);
    expect(plan.update.map((a) => a.metadata.name)).toEqual(["gb-b"]);
    expect(plan.unchanged).toEqual(["gb-a"]);
    expect(plan.delete).toEqual(["gb-gone"]);
    expect(plan.release).toEqual([]);
  });
  it("releases vanished Apps under deletePolicy keep", () => {
    const plan = planAppSet(SET, [], [owned("gb-gone")], "keep");
    expect(plan.delete).toEqual([]);
    expect(plan.release).toEqual(["gb-gone"]);
  });
  it("never touches an App it did not make: same name is a conflict, others are ignored", () => {
    const foreign: ExistingApp = { metadata: { name: "gb-a" } };
    const otherSet = owned("gb-b", hash("gb-b"), "uid-of-another-appset");
    const stranger: ExistingApp = { metadata: { name: "unrelated" } };
    const plan = planAppSet(SET, want.apps, [foreign, otherSet, stranger], "delete");
    expect(plan.conflicts).toEqual(["gb-a", "gb-b"]);
    expect(plan.create.map((a) => a.metadata.name)).toEqual(["gb-c"]);
    expect(plan.update).toEqual([]);
    expect(plan.delete).toEqual([]);
  });
  it("leaves an App being deleted alone", () => {
    const dying = owned("gb-x");
    dying.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    expect(planAppSet(SET, [], [dying], "delete").delete).toEqual([]);
  });
});

describe("appSetStatus", () => {
  it("is Ready with the Apps it keeps, and ErrorOccurred on a conflict", () => {
    const want = desiredApps(SET, template, [directoryParams("apps/a")]);
    if (!want.ok) throw new Error("template");
    const plan = planAppSet(SET, want.apps, [], "delete");
    const ok = appSetStatus(undefined, SET, { plan }, NOW);
    expect(ok.observedGeneration).toBe(3);
    expect(ok.apps).toEqual([{ name: "gb-a" }]);
    expect(ok.conditions?.map((c) => [c.type, c.status, c.reason])).toEqual([
      ["Ready", "True", "AppsUpToDate"],
      ["ErrorOccurred", "False", "AppsUpToDate"],
    ]);
    const clash = planAppSet(SET, want.apps, [{ metadata: { name: "gb-a" } }], "delete");
    const later = new Date(NOW.getTime() + 60_000);
    const bad = appSetStatus(ok, SET, { plan: clash }, later);
    const ready = bad.conditions?.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({ status: "False", reason: "ApplicationConflict" });
    expect(ready?.message).toContain("gb-a already exist");
    expect(ready?.lastTransitionTime).toBe(later.toISOString());
    expect(bad.apps).toEqual([]);
  });
  it("keeps the previous App list when generation failed", () => {
    const prev = { apps: [{ name: "gb-a" }] };
    const s = appSetStatus(prev, SET, { errors: ["bad template"] }, NOW);
    expect(s.apps).toEqual([{ name: "gb-a" }]);
    expect(s.conditions?.find((c) => c.type === "ErrorOccurred")).toMatchObject({
      status: "True",
      reason: "ApplicationGenerationFailed",
      message: "bad template",
    });
  });
});
