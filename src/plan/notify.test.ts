import { describe, expect, it } from "vitest";
import type { App, AppStatus } from "../app/index.ts";
import { notificationEvent, notifies, targetNames, transitions, withOpenAlert } from "./notify.ts";

const ready = (
  status: "True" | "False",
  reason: string,
  message = "m",
): AppStatus["conditions"] => [
  { type: "Ready", status, reason, message, lastTransitionTime: "2026-11-29T00:00:00Z" },
];
const A = "a".repeat(40);
const B = "b".repeat(40);

describe("transitions", () => {
  it("announces a new revision, once", () => {
    const before: AppStatus = {
      revision: A,
      healthStatus: "Healthy",
      conditions: ready("True", "Synced"),
    };
    const after: AppStatus = { ...before, revision: B };
    expect(transitions(before, after, 0)).toEqual([
      { event: "Synced", message: "applied revision bbbbbbb" },
    ]);
    expect(transitions(after, after, 0)).toEqual([]);
  });

  it("a partly failed apply is Failed, not Synced", () => {
    const before: AppStatus = { revision: A, conditions: ready("True", "Synced") };
    const after: AppStatus = {
      revision: B,
      conditions: ready("False", "ApplyFailed", "Widget w: no kind"),
    };
    expect(transitions(before, after, 0)).toEqual([
      { event: "Failed", message: "ApplyFailed: Widget w: no kind" },
    ]);
  });

  it("a steady failure alerts once; a different failure alerts again", () => {
    const failing: AppStatus = { conditions: ready("False", "RenderFailed", "x.yaml:1: bad") };
    expect(transitions({}, failing, 0)).toHaveLength(1);
    expect(transitions(failing, failing, 0)).toEqual([]);
    const other: AppStatus = { conditions: ready("False", "RenderFailed", "y.yaml:2: bad") };
    expect(transitions(failing, other, 0)).toEqual([
      { event: "Failed", message: "RenderFailed: y.yaml:2: bad" },
    ]);
  });

  it("a failure that clears without a new apply is announced once (Synced, in sync again)", () => {
    const failing: AppStatus = {
      revision: A,
      observedRevision: B,
      conditions: ready("False", "RenderFailed", "x.yaml:1: bad"),
    };
    const fixed: AppStatus = { ...failing, conditions: ready("True", "Synced") };
    expect(transitions(failing, fixed, 0)).toEqual([
      { event: "Synced", message: "in sync again at revision bbbbbbb" },
    ]);
    expect(transitions(fixed, fixed, 0)).toEqual([]);
    const applied: AppStatus = { ...fixed, revision: B };
    expect(transitions(failing, applied, 0)).toEqual([
      { event: "Synced", message: "applied revision bbbbbbb" },
    ]);
  });

  it("Degraded, Recovered, Held and DriftCorrected on their transitions only", () => {
    expect(
      transitions({ healthStatus: "Healthy" }, { healthStatus: "Degraded", healthReason: "r" }, 0),
    ).toEqual([{ event: "Degraded", message: "r" }]);
    expect(transitions({ healthStatus: "Degraded" }, { healthStatus: "Healthy" }, 0)).toEqual([
      { event: "Recovered", message: "healthy again after Degraded: degraded" },
    ]);
    const preview = [
      {
        apiVersion: "v1",
        kind: "Service",
        name: "web",
        status: "OutOfSync" as const,
        message: "will be created",
      },
    ];
    expect(transitions({}, { heldRevision: B, resources: preview }, 0)).toEqual([
      {
        event: "Held",
        message: "revision bbbbbbb is waiting for approval",
        held: { revision: B, preview },
      },
    ]);
    expect(transitions({ heldRevision: B }, { heldRevision: B }, 2)).toEqual([
      { event: "DriftCorrected", message: "re-applied 2 drifted object(s)" },
    ]);
  });

  it("Recovered once after Degraded → Progressing → Healthy, however many runs it takes", () => {
    const t0 = new Date("2026-12-01T10:00:00Z");
    const runs: AppStatus[] = [
      { healthStatus: "Healthy", conditions: ready("True", "Synced") },
      {
        healthStatus: "Degraded",
        healthReason: "Deployment web: crashing",
        conditions: ready("False", "Degraded"),
      },
      {
        healthStatus: "Progressing",
        healthReason: "1 of 2 updated",
        conditions: ready("False", "Progressing"),
      },
      {
        healthStatus: "Progressing",
        healthReason: "2 of 2 updated",
        conditions: ready("False", "Progressing"),
      },
      { healthStatus: "Healthy", conditions: ready("True", "Synced") },
      { healthStatus: "Healthy", conditions: ready("True", "Synced") },
    ];
    const events: string[][] = [];
    let prev: AppStatus = runs[0]!;
    runs.slice(1).forEach((composed, i) => {
      const list = transitions(prev, composed, 0);
      events.push(list.map((t) => t.event));
      prev = withOpenAlert(prev, composed, list, new Date(t0.getTime() + i * 60_000));
      if (i === 2) {
        expect(prev.openAlert).toEqual({
          event: "Degraded",
          message: "Deployment web: crashing",
          since: "2026-12-01T10:00:00.000Z",
        });
      }
    });
    expect(events).toEqual([["Degraded"], [], [], ["Recovered"], []]);
    expect(prev.openAlert).toBeUndefined();
  });

  it("Healthy once when a sync's rollout finishes, not in the run that applied or recovered", () => {
    const applied: AppStatus = {
      revision: B,
      healthStatus: "Progressing",
      conditions: ready("True", "Synced"),
    };
    const before: AppStatus = { ...applied, revision: A, healthStatus: "Healthy" };
    expect(transitions(before, applied, 0).map((t) => t.event)).toEqual(["Synced"]);
    const healthy: AppStatus = { ...applied, healthStatus: "Healthy" };
    expect(transitions(applied, healthy, 0)).toEqual([
      { event: "Healthy", message: "revision bbbbbbb is healthy" },
    ]);
    expect(transitions(healthy, healthy, 0)).toEqual([]);
    // Applied and healthy in one run: Synced says it.
    const progressing = { ...before, healthStatus: "Progressing" as const };
    expect(transitions(progressing, healthy, 0).map((t) => t.event)).toEqual(["Synced"]);
    // Healthy with a failure is not Healthy.
    const failing: AppStatus = { ...healthy, conditions: ready("False", "ApplyFailed") };
    expect(transitions(applied, failing, 0).map((t) => t.event)).toEqual(["Failed"]);
  });

  it("Recovered once after a source failure clears (Ready False SourceFailed → True)", () => {
    const now = new Date("2026-12-01T10:00:00Z");
    const healthy: AppStatus = { healthStatus: "Healthy", conditions: ready("True", "Synced") };
    const failing: AppStatus = {
      healthStatus: "Healthy",
      conditions: ready("False", "SourceFailed", "connection refused"),
    };
    const l1 = transitions(healthy, failing, 0);
    expect(l1).toEqual([{ event: "Failed", message: "SourceFailed: connection refused" }]);
    const s1 = withOpenAlert(healthy, failing, l1, now);
    // The same failure again: nothing announced, the alert stays open.
    const l2 = transitions(s1, failing, 0);
    expect(l2).toEqual([]);
    const s2 = withOpenAlert(s1, failing, l2, now);
    expect(s2.openAlert?.event).toBe("Failed");
    const l3 = transitions(s2, healthy, 0);
    expect(l3).toEqual([
      // A failure cleared with nothing new to apply is "in sync again".
      { event: "Synced", message: "in sync again" },
      {
        event: "Recovered",
        message: "healthy again after Failed: SourceFailed: connection refused",
      },
    ]);
    expect(withOpenAlert(s2, healthy, l3, now).openAlert).toBeUndefined();
  });

  it("no Recovered while still failing, Progressing or Degraded, nor without a problem", () => {
    const open: AppStatus = {
      healthStatus: "Degraded",
      openAlert: { event: "Degraded", message: "x", since: "2026-12-01T10:00:00Z" },
    };
    const progressing: AppStatus = {
      healthStatus: "Progressing",
      conditions: ready("False", "Progressing"),
    };
    const failedButHealthy: AppStatus = {
      healthStatus: "Healthy",
      conditions: ready("False", "ApplyFailed", "Widget w: no kind"),
    };
    expect(transitions(open, progressing, 0)).toEqual([]);
    expect(transitions(open, failedButHealthy, 0).map((t) => t.event)).toEqual(["Failed"]);
    const healthy: AppStatus = { healthStatus: "Healthy", conditions: ready("True", "Synced") };
    // Healthy without a problem before: no Recovered (Healthy says the rollout finished).
    expect(transitions(progressing, healthy, 0).map((t) => t.event)).toEqual(["Healthy"]);
    expect(transitions({}, healthy, 0).map((t) => t.event)).toEqual(["Healthy"]);
  });

  it("a later problem updates the open alert and keeps when it started", () => {
    const since = "2026-12-01T10:00:00.000Z";
    const before: AppStatus = {
      healthStatus: "Degraded",
      openAlert: { event: "Degraded", message: "crashing", since },
    };
    const after: AppStatus = {
      healthStatus: "Degraded",
      conditions: ready("False", "RenderFailed", "a.yaml:1: bad"),
    };
    const list = transitions(before, after, 0);
    expect(withOpenAlert(before, after, list, new Date()).openAlert).toEqual({
      event: "Failed",
      message: "RenderFailed: a.yaml:1: bad",
      since,
    });
  });
});

describe("DriftCorrected", () => {
  it("is announced from status.lastDriftCorrection, naming what was re-applied and who changed it", () => {
    const before: AppStatus = { healthStatus: "Healthy" };
    const after: AppStatus = {
      healthStatus: "Healthy",
      lastDriftCorrection: {
        at: "2026-12-01T10:00:00.000Z",
        count: 12,
        objects: ["Deployment team-a/web: spec.replicas by kubectl", "Service team-a/web: deleted"],
      },
    };
    expect(transitions(before, after, 12)).toEqual([
      {
        event: "DriftCorrected",
        message:
          "re-applied Deployment team-a/web: spec.replicas by kubectl; Service team-a/web: deleted and 10 more",
      },
    ]);
    // The same correction read again is not a new one.
    expect(transitions(after, after, 0)).toEqual([]);
  });
});

describe("notificationEvent", () => {
  const app = { namespace: "team-a", name: "web" };
  const status: AppStatus = { revision: A, observedRevision: B };

  it("is about the applied revision, the observed one when it failed, the held one when held", () => {
    expect(notificationEvent(app, { event: "Synced", message: "applied" }, status)).toEqual({
      app,
      transition: "Synced",
      revision: A,
      message: "applied",
    });
    expect(notificationEvent(app, { event: "Failed", message: "x" }, status).revision).toBe(B);
    expect(
      notificationEvent(app, { event: "Failed", message: "x" }, { revision: A }).revision,
    ).toBe(A);
    const held = { revision: B, preview: [] };
    expect(notificationEvent(app, { event: "Held", message: "h", held }, status)).toEqual({
      app,
      transition: "Held",
      revision: B,
      message: "h",
      preview: { revision: B, resources: [] },
    });
    expect(notificationEvent(app, { event: "Degraded", message: "d" }, {})).toEqual({
      app,
      transition: "Degraded",
      message: "d",
    });
  });

  it("a redelivered transition keeps the revision it was about", () => {
    const late = { event: "Synced" as const, message: "m", revision: B };
    expect(notificationEvent(app, late, status).revision).toBe(B);
  });
});

describe("notification targets of an App", () => {
  const of = (notifications: unknown, status: AppStatus = {}): App => ({
    apiVersion: "plumb.dev/v1alpha1",
    kind: "App",
    metadata: { namespace: "team-a", name: "web" },
    spec: { source: { image: { repository: 42 } }, notifications },
    status,
  });

  it("are read on their own, so an App whose spec is otherwise invalid still notifies", () => {
    expect(targetNames(of({ slack: { secretRef: { name: "slack" } } }))).toEqual(["slack"]);
    expect(targetNames(of(undefined))).toEqual([]);
    expect(targetNames(of({ slack: { on: ["Failed"] } }))).toEqual([]);
  });

  it("are several when spec.notifications names several, in TARGET_NAMES order", () => {
    const several = {
      github: { secretRef: { name: "gh" } },
      slack: { secretRef: { name: "slack" } },
      generic: { secretRef: { name: "hook" }, signingSecretRef: { name: "hook" } },
      msteams: { secretRef: { name: "teams" } },
    };
    expect(targetNames(of(several))).toEqual(["slack", "generic", "msteams", "github"]);
  });

  it("notify while a target is configured or notifications wait for one", () => {
    expect(notifies(of({ slack: { secretRef: { name: "slack" } } }))).toBe(true);
    expect(notifies(of(undefined))).toBe(false);
    const waiting = [{ event: "Synced" as const, message: "m", at: "t", attempts: 1 }];
    expect(notifies(of(undefined, { pendingNotifications: waiting }))).toBe(true);
  });
});
