// One redactor per run: everything a run writes or says passes through it (the
// Redactor itself is src/core/redact.ts).
import type { AppStatus } from "../app/index.ts";
import { type ObjectRef, Redactor } from "../core/index.ts";
import type { Ports } from "./ports.ts";

/**
 * `ports` with a redactor for the run — the process's (`ports.redactor`, shared by its runs,
 * its log and its HTTP answers) or, when the composition root gave none, the run's own — and a
 * log whose entries pass through it. The run registers its source credentials and the values
 * of every Secret it renders with it (source.ts); recordRun redacts status and Events with it;
 * announce redacts what the notification targets post; reconcileApp redacts its result line.
 */
export function redactingPorts(ports: Ports): Ports & { redactor: Redactor } {
  const redactor = ports.redactor ?? new Redactor();
  const log = ports.log;
  return {
    ...ports,
    redactor,
    ...(log ? { log: (entry: Record<string, unknown>) => log(redactor.redactValue(entry)) } : {}),
  };
}

/**
 * `status` with every secret value, in any encoding, redacted from its text (conditions,
 * health reason, resource messages, drift values, the operation's message — and any text field
 * added later), while what identifies objects and revisions stays as it is: the inventory (it
 * decides what is pruned), the refs of resource lines and drift entries, revisions and hashes.
 */
export function redactStatus(status: AppStatus, redactor: Redactor | undefined): AppStatus {
  if (!redactor || redactor.size === 0) return status;
  const shown = redactor.redactValue(status);
  const keep = <K extends keyof AppStatus>(key: K) => {
    if (status[key] !== undefined) shown[key] = status[key];
  };
  for (const key of IDENTITY) keep(key);
  const refs = (from: readonly ObjectRef[] | undefined, to: ObjectRef[] | undefined) =>
    to?.forEach((r, i) => {
      const ref = from?.[i];
      if (ref) Object.assign(r, refOnly(ref));
    });
  refs(status.resources, shown.resources);
  refs(status.drift, shown.drift);
  return shown;
}

/** Status fields that name objects, revisions and rendered sets: identity, not text. */
const IDENTITY = [
  "inventory",
  "revision",
  "observedRevision",
  "heldRevision",
  "heldObjectHash",
  "rejectedRevision",
  "rejectedObjectHash",
  "rolledBackFrom",
  "previousRevisions",
  "objectHash",
  "observedObjectHash",
  "observedValuesDigest",
] as const satisfies ReadonlyArray<keyof AppStatus>;

function refOnly(ref: ObjectRef): ObjectRef {
  const out: ObjectRef = { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name };
  if (ref.namespace !== undefined) out.namespace = ref.namespace;
  return out;
}
