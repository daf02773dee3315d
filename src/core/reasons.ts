// One vocabulary for what plumb reports: condition reasons, Event reasons and gate decisions.
// CamelCase, as Kubernetes API conventions ask of a condition's `reason`
// (https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#typical-status-properties).

/** Why a run failed: the Ready condition's reason (Ready=False), and a Warning Event. */
export const FailureReason = {
  /** spec fails validation, or a spec value the cluster's policy refuses. */
  InvalidSpec: "InvalidSpec",
  /** The source could not be resolved or fetched (Git server, registry, credentials). */
  SourceFailed: "SourceFailed",
  /** The fetched source does not render to a valid, allowed set of objects. */
  RenderFailed: "RenderFailed",
  /** Some objects were not applied. */
  ApplyFailed: "ApplyFailed",
  /** Some objects could not be pruned. */
  PruneFailed: "PruneFailed",
  /**
   * A pre-delete or post-delete hook of an App being deleted failed, did not finish in time,
   * or did not render: the App is kept (its finalizer stays) and the next run tries again.
   */
  HookFailed: "HookFailed",
  /** A host an Ingress of the App would serve is served by another Ingress: nothing applied. */
  HostConflict: "HostConflict",
  /**
   * The destination cluster's kubeconfig Secret is missing, malformed or refused (exec
   * plugins, auth providers, files, insecure TLS): nothing runs.
   */
  DestinationInvalid: "DestinationInvalid",
  /**
   * The destination cluster (or a former one still holding objects) does not answer: connection
   * refused, TLS failure, timeout, 401/403. Nothing is applied or pruned; retried with backoff.
   */
  DestinationUnreachable: "DestinationUnreachable",
  /**
   * A request to the Kubernetes API failed after the transport's retries; the run stopped
   * there (what it wrote before stays tracked in the inventory).
   */
  ApiFailed: "ApiFailed",
  /**
   * An App named in spec.dependsOn is missing, not Ready, or its readyExpr does not hold:
   * nothing is applied until it is (Flux's DependencyNotReady); its run that makes it Ready
   * runs this App.
   */
  DependencyNotReady: "DependencyNotReady",
  /** The run stopped on an error plumb did not expect (a bug: the message says where). */
  InternalError: "InternalError",
} as const;
export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

/** Reasons of conditions that are not failures. */
export const ConditionReason = {
  /** Ready=True: the applied revision is Synced (or Held, OutOfSync: the sync status). */
  Synced: "Synced",
  OutOfSync: "OutOfSync",
  Held: "Held",
  Unknown: "Unknown",
  /** Ready=False and Reconciling=True while objects roll out. */
  Progressing: "Progressing",
  /** Ready=False: an object is unhealthy or absent. */
  Degraded: "Degraded",
  Missing: "Missing",
  /** Ready=True: spec.freeze holds everything back (the message names what waits). */
  Frozen: "Frozen",
  /** Ready=True, OutOfSync: a sync window holds the change back (the message names it). */
  OutsideSyncWindow: "OutsideSyncWindow",
  /** Reconciling=False and Stalled=False after a run that did not fail. */
  Reconciled: "Reconciled",
  /** Stalled=False after a failure that the schedule retries. */
  Retrying: "Retrying",
} as const;

/** Reasons of the DNSRecords condition (the records of the App's domains). */
export const DnsReason = {
  /** Every domain in the zone has plumb's record pointing at the target. */
  RecordsReady: "RecordsReady",
  /** A record someone else made is at a domain's name: left alone, no record of plumb's. */
  RecordConflict: "RecordConflict",
  /** The DNS provider refused or could not be reached; retried on the next full run. */
  DNSFailed: "DNSFailed",
} as const;
export type DnsReason = (typeof DnsReason)[keyof typeof DnsReason];
export type ConditionReason = (typeof ConditionReason)[keyof typeof ConditionReason];

/** Reasons of the Events plumb emits on an App (besides the FailureReasons, as Warnings). */
export const EventReason = {
  Applied: "Applied",
  Pruned: "Pruned",
  /** An object deleted and created again because an immutable field changed (plumb.dev/recreate). */
  Recreated: "Recreated",
  /**
   * A stale object not pruned, with the reason: another App renders it, a kept kind (Normal),
   * or deleting it would delete others' objects with it (Warning).
   */
  PruneSkipped: "PruneSkipped",
  Held: "Held",
  /** A held revision was turned down (a Reject operation). */
  Rejected: "Rejected",
  DriftCorrected: "DriftCorrected",
  OperationSucceeded: "OperationSucceeded",
  OperationFailed: "OperationFailed",
  OperationRequested: "OperationRequested",
  NotificationFailed: "NotificationFailed",
  /** Objects another tool made were taken over (spec.adopt). */
  Adopted: "Adopted",
  /** DNS records of the App's domains were created, updated or deleted. */
  DNSUpdated: "DNSUpdated",
  /** Objects left on an unreachable cluster, dropped from the inventory (plumb.dev/orphan-unreachable). */
  Orphaned: "Orphaned",
} as const;
export type EventReason =
  | (typeof EventReason)[keyof typeof EventReason]
  | FailureReason
  | DnsReason;

/** Why the gates decided what they did (plan/gates.ts), shown in operation outcomes and logs. */
export const GateReason = {
  Automated: "Automated",
  Approved: "Approved",
  Rollback: "Rollback",
  Restart: "Restart",
  Sync: "Sync",
  Deploy: "Deploy",
  RequiresApproval: "RequiresApproval",
  AwaitingApproval: "AwaitingApproval",
  /** A Reject of the held revision, and the head being the revision rejected. */
  Rejected: "Rejected",
  RolledBack: "RolledBack",
  /** The render's apply failed terminally: automated sync waits for another render. */
  ApplyStalled: "ApplyStalled",
  Frozen: "Frozen",
  ManualSync: "ManualSync",
  /** spec.syncWindows block automated sync now. */
  OutsideSyncWindow: "OutsideSyncWindow",
  UpToDate: "UpToDate",
  OperationRefused: "OperationRefused",
} as const;
export type GateReason = (typeof GateReason)[keyof typeof GateReason];

const FAILURES: ReadonlySet<string> = new Set(Object.values(FailureReason));

/** True for a Ready reason that means the run failed (not merely unhealthy or progressing). */
export function isFailureReason(reason: string): reason is FailureReason {
  return FAILURES.has(reason);
}
