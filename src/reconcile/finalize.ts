// Finalize: an App being deleted prunes its inventory (same safety rules), then lets go.
import type { App, ObjectRef } from "../app/index.ts";
import { FINALIZER, validateSpec } from "../app/index.ts";
import { describeRef, refKey } from "../core/index.ts";
import { planPrune } from "../plan/index.ts";
import { listLive } from "./observe.ts";
import type { Ports } from "./ports.ts";

/**
 * With syncPolicy.prune (the default), prunes every inventory object no other App claims (never a Namespace, PVC or CRD unless
 * opted in), then removes the finalizer; with prune: false it only removes the finalizer. A delete that fails keeps the finalizer, records the
 * failure in status and is retried next run. Finishes when the destination namespace is
 * already gone or terminating (a 404 is success; deleting in a terminating namespace is too).
 */
export async function finalizeApp(app: App, ports: Ports, now: Date) {
  const id = `${app.metadata.namespace}/${app.metadata.name}`;
  const finalizers = app.metadata.finalizers ?? [];
  if (!finalizers.includes(FINALIZER)) return { app: id, outcome: "Finalized" as const };
  // prune: false keeps the objects when the App goes too (Flux's prune: false does the same).
  const spec = validateSpec(app.spec);
  const prune = spec.ok ? spec.value.syncPolicy.prune : true;
  const inventory = prune ? (app.status?.inventory ?? []) : [];
  const failed: ObjectRef[] = [];
  const errors: string[] = [];
  if (inventory.length > 0) {
    const appRef = { namespace: app.metadata.namespace, name: app.metadata.name };
    const live = await listLive(inventory, appRef, ports);
    const others = new Set<string>();
    for (const other of await ports.kube.listApps()) {
      if (other.metadata.uid === app.metadata.uid) continue;
      for (const ref of other.status?.inventory ?? []) others.add(refKey(ref));
    }
    const plan = planPrune({ inventory, desired: [], live, claimedByOthers: others, app: appRef });
    for (const ref of plan.delete) {
      try {
        await ports.kube.delete(ref);
      } catch (err) {
        failed.push(ref);
        errors.push(`${describeRef(ref)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  if (failed.length > 0) {
    const message = `finalizer could not prune: ${errors.join("; ")}`;
    await ports.kube.writeStatus(app, {
      ...app.status,
      inventory: failed,
      conditions: [
        {
          type: "Ready",
          status: "False",
          reason: "PruneFailed",
          message,
          lastTransitionTime: now.toISOString(),
        },
      ],
    });
    return { app: id, outcome: "Failed" as const, error: `PruneFailed: ${message}` };
  }
  await ports.kube.setFinalizers(
    app,
    finalizers.filter((f) => f !== FINALIZER),
  );
  return { app: id, outcome: "Finalized" as const };
}
