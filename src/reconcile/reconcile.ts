// reconcileApp: one stateless run for one App (DESIGN.md "The reconcile, step by step").
// Everything it knows it reads this run, from the cluster and the source; it writes status once.
import type { App, AppSpec, AppStatus, HealthStatus, SyncStatus } from "../app/index.ts";
import { FINALIZER, formatIssues, validateSpec } from "../app/index.ts";
import { KubeApiError } from "../core/index.ts";
import { decide, pendingOperation } from "../plan/index.ts";
import { renderRevision, resolveRevision, sourceAuth, sourceFailed } from "./desired.ts";
import { finalizeApp } from "./finalize.ts";
import { LeaseBusyError, withLease } from "./lease.ts";
import type { Ports, RequestCounts, SourceAuth } from "./ports.ts";
import { Run } from "./run.ts";

/** One JSON line per App for the CLI and the HTTP API (issue #3's shape). */
export interface RunResult {
  app: string;
  /** Skipped: a scheduled run found the App not due (see nextReconcileAt). */
  outcome: "Reconciled" | "NotFound" | "Finalized" | "Failed" | "Skipped";
  syncStatus?: SyncStatus;
  healthStatus?: HealthStatus;
  revision?: string;
  error?: string;
  /** For a Skipped App: when it is due. */
  nextReconcileAt?: string;
  /** True when the run ended before it could record its outcome in status (retry it). */
  retryable?: boolean;
  requests: RequestCounts;
}

const MAX_ATTEMPTS = 3;

/**
 * Reconciles App `namespace/name` once. Stateless: safe to run from a webhook, a cron tick and
 * a queue message at the same time — applies happen under a per-App Lease, and the status
 * write is conditional on the resourceVersion read at the start (a conflict re-runs).
 * @param now the run's clock (every time written to status derives from it)
 * @returns the outcome; `error` names what failed (never a secret). Throws only for
 *   unexpected API errors reading the App itself.
 */
export async function reconcileApp(
  ref: { namespace: string; name: string },
  ports: Ports,
  now: Date,
): Promise<RunResult> {
  const before = ports.kube.requestCounts();
  const id = `${ref.namespace}/${ref.name}`;
  let result: Omit<RunResult, "requests"> = { app: id, outcome: "Failed", error: "not run" };
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      result = await runOnce(ref, ports, now);
      break;
    } catch (err) {
      const retry =
        err instanceof LeaseBusyError || (err instanceof KubeApiError && err.status === 409);
      result = {
        app: id,
        outcome: "Failed",
        error: err instanceof Error ? err.message : String(err),
        retryable: true,
      };
      if (!retry) break;
      ports.log?.({ app: id, msg: "retrying after a concurrent change", attempt });
    }
  }
  const after = ports.kube.requestCounts();
  const requests = Object.fromEntries(
    Object.entries(after).map(([verb, n]) => [
      verb,
      n - (before[verb as keyof RequestCounts] ?? 0),
    ]),
  ) as RequestCounts;
  return { ...result, requests };
}

async function runOnce(
  ref: { namespace: string; name: string },
  ports: Ports,
  now: Date,
): Promise<Omit<RunResult, "requests">> {
  const id = `${ref.namespace}/${ref.name}`;
  // 1. Get the App. Gone: done. Being deleted: finalize. Otherwise ensure the finalizer.
  let app = await ports.kube.getApp(ref.namespace, ref.name);
  if (!app) return { app: id, outcome: "NotFound" };
  if (app.metadata.deletionTimestamp) return finalizeApp(app, ports, now);
  const finalizers = app.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER))
    app = await ports.kube.setFinalizers(app, [...finalizers, FINALIZER]);
  const prev: AppStatus = app.status ?? {};
  const run = new Run(app, prev, ports, now);

  // 2. Validate the spec. Invalid: Stalled until the generation changes.
  const validated = validateSpec(app.spec);
  const issues = validated.ok ? [] : [...validated.issues];
  if (app.metadata.name.length > 63) {
    // The name is the value of the plumb.dev/app label on every object (63 characters at most).
    issues.push({
      path: "metadata.name",
      message: "must be at most 63 characters (it labels every object)",
    });
  }
  if (!validated.ok || issues.length > 0) {
    return run.fail("InvalidSpec", formatIssues(issues), { stalled: true });
  }
  const spec = validated.value;
  run.interval = spec.interval;

  // 3. Resolve the source to a revision (ls-refs, or tag → digest).
  let auth: SourceAuth | undefined;
  let revision: string;
  try {
    auth = await sourceAuth(app, spec, ports);
    revision = await resolveRevision(spec, auth, ports);
  } catch (err) {
    const failed = sourceFailed(err);
    return run.fail("SourceFailed", failed.ok ? "" : failed.message, { stalled: false });
  }
  run.record.observedRevision = revision;

  // 3b. Fast path: same revision and spec as last run, nothing pending, not due for a full
  //     comparison: no fetch, no render; health of the inventory only.
  if (isSteady(app, spec, prev, revision, now)) return run.observe(spec, undefined, "Synced");

  // 3c. Fetch and render (pure after the fetch). A failed render applies and prunes nothing,
  //     and an empty one prunes nothing either unless allowEmpty (Argo CD's allowEmpty).
  let desired = await renderRevision(app, spec, revision, auth, ports);
  if (
    desired.ok &&
    desired.objects.length === 0 &&
    run.inventory.length > 0 &&
    !spec.syncPolicy.allowEmpty
  ) {
    desired = {
      ok: false,
      reason: "RenderFailed",
      transient: false,
      message: `revision ${revision} renders no objects; refusing to prune all ${run.inventory.length} (set spec.syncPolicy.allowEmpty to allow it)`,
    };
  }
  const op = pendingOperation(spec, prev);
  if (!desired.ok) {
    // A Rollback or Approve names its own revision: the head failing to render must not block it.
    const own = op && (op.type === "Rollback" || op.type === "Approve") && !spec.freeze;
    if (!own) {
      if (op) run.operationDone(op, "Failed", desired.message);
      const stalled = desired.issues?.some((i) => i.path.startsWith("spec.")) ?? false;
      return run.fail(desired.reason, desired.message, {
        stalled,
        outOfSync: revision !== prev.revision,
      });
    }
  } else {
    run.record.observedObjectHash = desired.objectHash;
  }

  // 4. Gates: freeze, pending operation, requiresApproval, automated.
  const head = desired.ok ? desired : undefined;
  const decision = decide(spec, prev, {
    revision,
    objectHash: head?.objectHash ?? prev.objectHash ?? "",
  });
  switch (decision.action) {
    case "apply": {
      // 5. Apply (staged) and prune, under the App's Lease.
      let target = head;
      if (!target || decision.revision !== revision) {
        const other = await renderRevision(app, spec, decision.revision, auth, ports);
        if (!other.ok) return run.fail(other.reason, other.message, { stalled: false, decision });
        target = other;
      }
      return withLease(app, ports, () => run.apply(spec, target, decision, revision));
    }
    case "restart":
      return withLease(app, ports, () => run.restart(spec, decision));
    case "hold":
      return run.hold(spec, head!);
    case "none":
      if (decision.operation) run.operationDone(decision.operation, "Failed", decision.reason);
      return run.observe(spec, head, undefined, decision);
  }
}

/** Nothing to do but look at health: same revision, spec and hash as the last successful run. */
function isSteady(app: App, spec: AppSpec, prev: AppStatus, revision: string, now: Date): boolean {
  const next = prev.nextReconcileAt ? Date.parse(prev.nextReconcileAt) : Number.NaN;
  return (
    pendingOperation(spec, prev) === undefined &&
    !spec.syncPolicy.selfHeal &&
    !prev.failures &&
    prev.observedGeneration === app.metadata.generation &&
    prev.observedRevision === revision &&
    prev.observedObjectHash !== undefined &&
    (prev.revision === revision ||
      spec.freeze ||
      !spec.syncPolicy.automated ||
      prev.heldRevision === revision ||
      prev.rolledBackFrom === revision) &&
    next > now.getTime()
  );
}
