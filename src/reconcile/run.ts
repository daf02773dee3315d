// The state of one reconcile run: what its steps record, turned into status once at the end.
import type {
  App,
  AppSpec,
  AppStatus,
  ObjectRef,
  OperationState,
  ResourceStatus,
  SyncStatus,
} from "../app/index.ts";
import { describeRef, type KubeObject, refKey, refOf } from "../core/index.ts";
import {
  composeStatus,
  type Decision,
  detectDrift,
  planPrune,
  type RunRecord,
  statusChanged,
  transitions,
} from "../plan/index.ts";
import { announce } from "./announce.ts";
import { applyStaged, restartWorkloads } from "./apply.ts";
import { withLease } from "./lease.ts";
import { healthOf, listLive, resourceStatus } from "./observe.ts";
import type { Ports } from "./ports.ts";
import type { RunResult } from "./reconcile.ts";

/** The state of one run: what the steps recorded, turned into status once at the end. */
export class Run {
  readonly app: App;
  readonly prev: AppStatus;
  readonly ports: Ports;
  readonly now: Date;
  interval = "5m";
  driftCorrected = 0;
  readonly record: Partial<RunRecord> = {};
  readonly events: Array<{ type: "Normal" | "Warning"; reason: string; message: string }> = [];

  constructor(app: App, prev: AppStatus, ports: Ports, now: Date) {
    this.app = app;
    this.prev = prev;
    this.ports = ports;
    this.now = now;
  }

  get inventory(): ObjectRef[] {
    return this.prev.inventory ?? [];
  }

  operationDone(
    op: {
      id: string;
      type: OperationState["type"];
      revision?: string | undefined;
      requestedBy?: string | undefined;
    },
    phase: "Succeeded" | "Failed",
    message: string,
  ): void {
    const state: OperationState = {
      id: op.id,
      type: op.type,
      phase,
      message,
      startedAt: this.now.toISOString(),
      finishedAt: this.now.toISOString(),
    };
    if (op.revision) state.revision = op.revision;
    if (op.requestedBy) state.requestedBy = op.requestedBy;
    this.record.operationState = state;
    this.events.push({
      type: phase === "Succeeded" ? "Normal" : "Warning",
      reason: `Operation${phase}`,
      message: `${op.type}: ${message}`,
    });
  }

  /** A failed step: keep inventory and resources, record the failure, write status. */
  async fail(
    reason: string,
    message: string,
    opts: { stalled: boolean; decision?: Decision; outOfSync?: boolean },
  ): Promise<Omit<RunResult, "requests">> {
    if (opts.decision && "operation" in opts.decision && opts.decision.operation) {
      this.operationDone(opts.decision.operation, "Failed", message);
    }
    this.events.push({ type: "Warning", reason, message });
    // Health goes on being watched while the source or render is broken (one list per kind).
    let health = {
      status: this.prev.healthStatus ?? "Unknown",
      reason: this.prev.healthReason ?? "",
    };
    let resources = this.prev.resources ?? [];
    if (this.inventory.length > 0 && reason !== "InvalidSpec") {
      const observed = healthOf(
        this.inventory,
        await listLive(this.inventory, this.appRef, this.ports),
        this.now,
      );
      health = { status: observed.status, reason: observed.reason };
      resources = resources.map((r) => {
        const h = observed.byKey.get(refKey(r));
        return h
          ? resourceStatus(r, r.status, h, r.status === "Failed" ? r.message : undefined)
          : r;
      });
    }
    return this.finish({
      inventory: this.inventory,
      resources,
      health,
      syncStatus: opts.outOfSync ? "OutOfSync" : (this.prev.syncStatus ?? "Unknown"),
      failure: { reason, message, stalled: opts.stalled },
    });
  }

  /** Apply `target`, prune what the last inventory has and `target` lacks, assess health. */
  async apply(
    spec: AppSpec,
    target: { revision: string; objects: KubeObject[]; objectHash: string },
    decision: Extract<Decision, { action: "apply" }>,
    sourceRevision: string,
  ) {
    // Exact ownership: an object in another App's inventory is theirs (Namespaces may be shared).
    const owners = await this.claimedByOthers();
    const contested = new Map<string, string>();
    const mine = target.objects.filter((o) => {
      const owner = o.kind === "Namespace" ? undefined : owners.get(refKey(refOf(o)));
      if (owner)
        contested.set(
          refKey(refOf(o)),
          `${describeRef(refOf(o))} belongs to App ${owner} (in its inventory); an object is managed by one App`,
        );
      return owner === undefined;
    });
    const outcome = await applyStaged(mine, this.ports);
    for (const [key, message] of contested) outcome.failed.set(key, message);
    const prevKeys = new Set(this.inventory.map(refKey));
    const desiredRefs = target.objects.map(refOf);
    const inventory: ObjectRef[] = [];
    const resources: ResourceStatus[] = [];
    const live = new Map(outcome.applied);

    // Prune: only after this render applied; failed deletes stay in the inventory.
    const candidates = this.inventory.filter(
      (r) => !desiredRefs.some((d) => refKey(d) === refKey(r)),
    );
    const pruned: string[] = [];
    const leftovers: ObjectRef[] = [];
    const pruneErrors: string[] = [];
    if (candidates.length > 0) {
      const liveCandidates = await listLive(candidates, this.appRef, this.ports);
      if (spec.syncPolicy.prune) {
        const plan = planPrune({
          inventory: candidates,
          desired: desiredRefs,
          live: liveCandidates,
          claimedByOthers: new Set(owners.keys()),
          app: this.appRef,
        });
        for (const ref of plan.delete) {
          try {
            await this.ports.kube.delete(ref);
            pruned.push(describeRef(ref));
            resources.push(resourceStatus(ref, "Pruned", undefined));
          } catch (err) {
            const msg = err instanceof Error ? err.message : String(err);
            pruneErrors.push(`${describeRef(ref)}: ${msg}`);
            leftovers.push(ref);
            resources.push(resourceStatus(ref, "PruneFailed", undefined, msg));
          }
        }
        for (const skip of plan.skip) {
          resources.push(resourceStatus(skip.ref, "PruneSkipped", undefined, skip.reason));
          if (skip.keep) leftovers.push(skip.ref);
        }
      } else {
        for (const ref of candidates) {
          if (!liveCandidates.has(refKey(ref))) continue;
          leftovers.push(ref);
          resources.push(
            resourceStatus(ref, "OutOfSync", undefined, "not in the source; prune is off"),
          );
        }
      }
    }

    const health = healthOf(desiredRefs, live, this.now);
    const failures: string[] = [];
    for (const ref of desiredRefs) {
      const key = refKey(ref);
      const err = outcome.failed.get(key);
      if (err === undefined) {
        inventory.push(ref);
        resources.push(resourceStatus(ref, "Synced", health.byKey.get(key)));
      } else {
        if (prevKeys.has(key)) inventory.push(ref);
        failures.push(`${describeRef(ref)}: ${err}`);
        resources.push(resourceStatus(ref, "Failed", { status: "Missing" }, err));
      }
    }
    inventory.push(...leftovers);

    const failed = failures.length > 0 || pruneErrors.length > 0;
    if (outcome.applied.size > 0) {
      this.events.push({
        type: "Normal",
        reason: "Applied",
        message: `applied revision ${target.revision}: ${outcome.applied.size} object(s)`,
      });
    }
    if (pruned.length > 0)
      this.events.push({
        type: "Normal",
        reason: "Pruned",
        message: `pruned ${pruned.join(", ")}`,
      });
    if (decision.operation) {
      this.operationDone(
        decision.operation,
        failed ? "Failed" : "Succeeded",
        failed ? [...failures, ...pruneErrors].join("; ") : `applied ${target.revision}`,
      );
    }
    // A partial apply records the revision but not the hash, so the next run applies again
    // (a CRD installed since, a namespace created since) instead of calling the set applied.
    this.record.applied =
      failures.length > 0
        ? { revision: target.revision }
        : { revision: target.revision, objectHash: target.objectHash };
    if (decision.reason === "Rollback")
      this.record.rolledBackFrom = target.revision === sourceRevision ? null : sourceRevision;
    else this.record.rolledBackFrom = null;
    if (outcome.applied.size === 0 && failures.length > 0) delete this.record.applied;
    const record: Omit<RunRecord, "now" | "generation" | "interval"> = {
      inventory: dedupeRefs(inventory),
      resources: sortResources(resources),
      health: { status: health.status, reason: health.reason },
      syncStatus: !failed && target.revision === sourceRevision ? "Synced" : "OutOfSync",
    };
    if (failures.length > 0) {
      record.failure = { reason: "ApplyFailed", message: failures.join("; "), stalled: false };
    } else if (pruneErrors.length > 0) {
      record.failure = { reason: "PruneFailed", message: pruneErrors.join("; "), stalled: false };
    }
    return this.finish(record);
  }

  /** Restart operation: annotate the pod templates, then observe. */
  async restart(spec: AppSpec, decision: Extract<Decision, { action: "restart" }>) {
    const { restarted, failed } = await restartWorkloads(this.inventory, this.ports, this.now);
    const message =
      failed.size > 0
        ? [...failed.values()].join("; ")
        : `restarted ${restarted.map(describeRef).join(", ") || "nothing"}`;
    this.operationDone(decision.operation, failed.size > 0 ? "Failed" : "Succeeded", message);
    return this.observe(spec, undefined, this.prev.syncStatus ?? "Unknown");
  }

  /** requiresApproval: stage the revision as Held, with a preview of what would change. */
  async hold(
    spec: AppSpec,
    desired: { revision: string; objects: KubeObject[]; objectHash: string },
  ) {
    this.record.held = { revision: desired.revision, objectHash: desired.objectHash };
    this.events.push({
      type: "Normal",
      reason: "Held",
      message: `revision ${desired.revision} is waiting for approval`,
    });
    return this.observe(spec, desired, "Held");
  }

  /**
   * Health (and, with the desired set at hand, drift and the change preview) without applying.
   * `syncStatus` undefined: Synced when the desired set equals what was applied and nothing drifted.
   */
  async observe(
    spec: AppSpec,
    desired: { revision: string; objects: KubeObject[]; objectHash: string } | undefined,
    syncStatus?: SyncStatus,
    decision?: Decision,
  ) {
    const desiredRefs = desired?.objects.map(refOf) ?? [];
    const refs = dedupeRefs([...this.inventory, ...desiredRefs]);
    const live = await listLive(refs, this.appRef, this.ports);
    const health = healthOf(this.inventory, live, this.now);
    const resources: ResourceStatus[] = [];
    const drift: NonNullable<RunRecord["drift"]> = [];
    const inventoryKeys = new Set(this.inventory.map(refKey));
    const desiredByKey = new Map((desired?.objects ?? []).map((o) => [refKey(refOf(o)), o]));
    const held = syncStatus === "Held";
    for (const ref of refs) {
      const key = refKey(ref);
      const want = desiredByKey.get(key);
      const have = live.get(key);
      if (!desired) {
        const previous = this.prev.resources?.find((r) => refKey(r) === key);
        resources.push(resourceStatus(ref, previous?.status ?? "Synced", health.byKey.get(key)));
        continue;
      }
      if (!want) {
        resources.push(
          resourceStatus(
            ref,
            "OutOfSync",
            health.byKey.get(key),
            held ? "will be pruned" : "not in the source",
          ),
        );
        continue;
      }
      if (!have) {
        const deleted = !held && inventoryKeys.has(key);
        // An object plumb applied and someone deleted is drift too (selfHeal recreates it).
        if (deleted)
          drift.push({
            ...ref,
            fields: [{ path: "(object)", desired: "exists", live: "deleted" }],
          });
        resources.push(
          resourceStatus(
            ref,
            "OutOfSync",
            { status: "Missing" },
            deleted ? "deleted" : "will be created",
          ),
        );
        continue;
      }
      const fields = detectDrift(want, have);
      if (fields.length > 0 && !held) drift.push({ ...ref, fields });
      const message =
        fields.length > 0
          ? `${held ? "will change" : "drifted"}: ${fields.map((f) => f.path).join(", ")}`
          : undefined;
      resources.push(
        resourceStatus(
          ref,
          fields.length > 0 ? "OutOfSync" : "Synced",
          health.byKey.get(key),
          message,
        ),
      );
    }

    // 7. Drift: correct it when selfHeal (re-apply the drifted objects under the Lease).
    if (
      desired &&
      drift.length > 0 &&
      spec.syncPolicy.selfHeal &&
      spec.syncPolicy.automated &&
      !spec.freeze &&
      decision?.action === "none" &&
      !decision.operation
    ) {
      const objs = drift.map((d) => desiredByKey.get(refKey(d))!).filter(Boolean);
      const outcome = await withLease(this.app, this.ports, () => applyStaged(objs, this.ports));
      this.driftCorrected = outcome.applied.size;
      this.events.push({
        type: "Normal",
        reason: "DriftCorrected",
        message: `re-applied ${drift.map((d) => describeRef(d)).join(", ")}`,
      });
      for (const r of resources)
        if (outcome.applied.has(refKey(r))) {
          r.status = "Synced";
          delete r.message;
        }
      drift.length = 0;
    }

    let sync = syncStatus;
    if (sync === undefined) {
      const differs = desired
        ? this.prev.revision !== desired.revision || this.prev.objectHash !== desired.objectHash
        : false;
      sync = differs || drift.length > 0 ? "OutOfSync" : "Synced";
    }
    return this.finish({
      inventory: this.inventory,
      resources: sortResources(resources),
      health: { status: health.status, reason: health.reason },
      syncStatus: sync,
      drift,
    });
  }

  get appRef() {
    return { namespace: this.app.metadata.namespace, name: this.app.metadata.name };
  }

  /** refKey → "namespace/name" of the other App whose inventory lists it (one list of all Apps). */
  async claimedByOthers(): Promise<Map<string, string>> {
    const apps = await this.ports.kube.listApps();
    const owners = new Map<string, string>();
    for (const other of apps) {
      if (other.metadata.uid === this.app.metadata.uid) continue;
      const id = `${other.metadata.namespace}/${other.metadata.name}`;
      for (const ref of other.status?.inventory ?? []) owners.set(refKey(ref), id);
    }
    return owners;
  }

  /** 8–9. Write status once (if it changed), emit Events, notify transitions. */
  async finish(
    part: Omit<RunRecord, "now" | "generation" | "interval">,
  ): Promise<Omit<RunResult, "requests">> {
    const record: RunRecord = {
      ...this.record,
      ...part,
      now: this.now,
      generation: this.app.metadata.generation,
      interval: this.interval,
    };
    const status = composeStatus(this.prev, record);
    if (statusChanged(this.prev, status, this.now)) {
      await this.ports.kube.writeStatus(this.app, status);
      for (const event of this.events) {
        await this.ports.kube
          .emitEvent(this.app, event)
          .catch((err) => this.ports.log?.({ msg: "event failed", error: String(err) }));
      }
      await announce(this.app, transitions(this.prev, status, this.driftCorrected), this.ports);
    }
    const out: Omit<RunResult, "requests"> = {
      app: `${this.app.metadata.namespace}/${this.app.metadata.name}`,
      outcome: record.failure ? "Failed" : "Reconciled",
    };
    if (status.syncStatus) out.syncStatus = status.syncStatus;
    if (status.healthStatus) out.healthStatus = status.healthStatus;
    if (status.revision) out.revision = status.revision;
    if (record.failure) out.error = `${record.failure.reason}: ${record.failure.message}`;
    return out;
  }
}

function dedupeRefs(refs: readonly ObjectRef[]): ObjectRef[] {
  const seen = new Map<string, ObjectRef>();
  for (const r of refs) if (!seen.has(refKey(r))) seen.set(refKey(r), r);
  return [...seen.values()];
}

function sortResources(resources: ResourceStatus[]): ResourceStatus[] {
  return resources.sort((a, b) => (refKey(a) < refKey(b) ? -1 : refKey(a) > refKey(b) ? 1 : 0));
}
