// The CLI verbs' arguments and table, without a cluster.
import { describe, expect, it } from "vitest";
import { testApp } from "../test/support/fake-kube.ts";
import { parseCliArgs } from "./cli-args.ts";
import { age, formatTable } from "./cli-verbs.ts";

const usage = (error: string) => ({ kind: "usage", error });

describe("parseCliArgs: verbs", () => {
  it("get: a list (context namespace, --namespace, -A), one App, -o json", () => {
    const base = {
      kind: "get",
      target: undefined,
      allNamespaces: false,
      namespace: undefined,
      output: "table",
      kubeconfig: undefined,
    };
    expect(parseCliArgs(["get"])).toEqual(base);
    expect(parseCliArgs(["get", "-A"])).toEqual({ ...base, allNamespaces: true });
    expect(parseCliArgs(["get", "--all-namespaces", "-o", "json"])).toEqual({
      ...base,
      allNamespaces: true,
      output: "json",
    });
    expect(parseCliArgs(["get", "--namespace", "team-a"])).toEqual({
      ...base,
      namespace: "team-a",
    });
    expect(parseCliArgs(["get", "team-a/web", "--kubeconfig", "/k"])).toEqual({
      ...base,
      target: { namespace: "team-a", name: "web" },
      kubeconfig: "/k",
    });
  });

  it("takes kubectl's and flux's -n NS and NAME, for get and every operation", () => {
    const base = {
      kind: "get",
      target: undefined,
      allNamespaces: false,
      namespace: undefined,
      output: "table",
      kubeconfig: undefined,
    };
    expect(parseCliArgs(["get", "-n", "team-a"])).toEqual({ ...base, namespace: "team-a" });
    expect(parseCliArgs(["get", "web", "-n", "team-a"])).toEqual({
      ...base,
      target: { namespace: "team-a", name: "web" },
    });
    // NAME alone: the kubeconfig context's namespace, resolved when the verb runs.
    expect(parseCliArgs(["get", "web"])).toEqual({
      ...base,
      target: { namespace: undefined, name: "web" },
    });
    for (const verb of ["approve", "reject", "sync", "rollback", "restart"]) {
      expect(parseCliArgs([verb, "-n", "team-a", "web"])).toMatchObject({
        kind: "operate",
        namespace: "team-a",
        name: "web",
      });
      expect(parseCliArgs([verb, "web", "--namespace", "team-a"])).toEqual(
        parseCliArgs([verb, "team-a/web"]),
      );
      expect(parseCliArgs([verb, "web"])).toMatchObject({ namespace: undefined, name: "web" });
    }
  });

  it("operations: approve, reject, sync, rollback, restart with --revision where it means something", () => {
    expect(parseCliArgs(["approve", "team-a/web"])).toEqual({
      kind: "operate",
      type: "Approve",
      namespace: "team-a",
      name: "web",
      revision: undefined,
      kubeconfig: undefined,
    });
    expect(parseCliArgs(["rollback", "team-a/web", "--revision", "abc"])).toMatchObject({
      type: "Rollback",
      revision: "abc",
    });
    expect(parseCliArgs(["reject", "team-a/web.v2", "--revision", "abc"])).toMatchObject({
      type: "Reject",
      name: "web.v2",
    });
    expect(parseCliArgs(["sync", "team-a/web"])).toMatchObject({
      type: "Sync",
      revision: undefined,
    });
    expect(parseCliArgs(["restart", "team-a/web"])).toMatchObject({ type: "Restart" });
  });

  it.each([
    [["approve"], "approve needs NAME or NAMESPACE/NAME"],
    [["approve", "-n", "team-a"], "approve needs NAME or NAMESPACE/NAME"],
    [["approve", "Web"], 'expected NAME or NAMESPACE/NAME, got "Web"'],
    [["approve", "Team/Web"], 'expected NAME or NAMESPACE/NAME, got "Team/Web"'],
    [["sync", "team-a/web", "-n", "team-a"], "give NAMESPACE/NAME or --namespace, not both"],
    [["sync", "web", "-n", "Team"], '--namespace must be a namespace name, got "Team"'],
    [["get", "web", "-n", "team-a", "-A"], "give --namespace or -A, not both"],
    [["get", "web", "-A"], "give NAMESPACE/NAME or -A, not both"],
    [["approve", "a/b", "c/d"], 'unexpected argument "c/d"'],
    [["sync", "a/b", "--revision", "r"], "--revision is not an option of sync"],
    [["restart", "a/b", "--revision", "r"], "--revision is not an option of restart"],
    [["approve", "a/b", "--revision", ""], "--revision must be 1 to 256 characters"],
    [["approve", "a/b", "--revision", "x".repeat(257)], "--revision must be 1 to 256 characters"],
    [["approve", "a/b", "-A"], "--all-namespaces is not an option of approve (it acts on one App)"],
    [["approve", "a/b", "-o", "json"], "--output is not an option of approve"],
    [["approve", "a/b", "--all"], "--all is not an option of approve"],
    [["get", "a/b", "-A"], "give NAMESPACE/NAME or -A, not both"],
    [["get", "-A", "--namespace", "x"], "give --namespace or -A, not both"],
    [["get", "a/b", "--namespace", "x"], "give NAMESPACE/NAME or --namespace, not both"],
    [["get", "-o", "yaml"], '-o must be json (the default is a table), got "yaml"'],
    [["get", "--revision", "r"], "--revision is not an option of get"],
    [["get", "--port", "80"], "--port is not an option of get"],
    [["reconcile", "a/b", "--revision", "r"], "--revision is not an option of reconcile"],
    [["serve", "-o", "json"], "--output is not an option of serve"],
  ])("usage error for %j", (argv, error) => {
    expect(parseCliArgs(argv)).toEqual(usage(error));
  });
});

describe("the get table", () => {
  const now = new Date("2026-03-04T05:06:07Z");
  it("aligns columns like flux get, with the namespace for -A", () => {
    const apps = [
      testApp("team-a", "web", {
        status: {
          syncStatus: "Held",
          healthStatus: "Healthy",
          revision: "0123456789abcdef0123456789abcdef01234567",
          heldRevision: "fedcba9876543210fedcba9876543210fedcba98",
          lastSyncedAt: "2026-03-04T04:06:07Z",
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "Held",
              message: "revision f is held\nfor approval",
              lastTransitionTime: "",
            },
          ],
        },
      }),
      testApp("team-bb", "api"),
    ];
    expect(formatTable(apps, true, now).split("\n")).toEqual([
      "NAMESPACE  NAME  REVISION  SYNC  HEALTH   HELD     LAST SYNC  MESSAGE",
      "team-a     web   0123456   Held  Healthy  fedcba9  60m        revision f is held for approval",
      "team-bb    api   -         -     -        -        -          ",
    ]);
    expect(formatTable(apps, false, now).split("\n")[0]).toBe(
      "NAME  REVISION  SYNC  HEALTH   HELD     LAST SYNC  MESSAGE",
    );
  });
  it("ages", () => {
    expect(age("2026-03-04T05:06:00Z", now)).toBe("7s");
    expect(age("2026-03-04T02:06:07Z", now)).toBe("3h");
    expect(age("2026-02-01T05:06:07Z", now)).toBe("31d");
    expect(age(undefined, now)).toBe("-");
  });
});
