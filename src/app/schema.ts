// The App API, plumb.dev/v1alpha1: one zod schema from which the TypeScript types,
// runtime validation and the CRD's openAPIV3Schema (scripts/generate-crd.ts) are all derived.
import { z } from "zod";
import { DNS_LABEL, DNS_SUBDOMAIN } from "../core/index.ts";
import { AppSource } from "./app-source.ts";
import { cronIssue, timeZoneIssue } from "./cron.ts";
import { parseDuration } from "./duration.ts";

/** Longest spec.interval accepted (a year): beyond it dates overflow. */
export const MAX_INTERVAL_MS = 8760 * 3_600_000;

export const GROUP = "plumb.dev";
export const VERSION = "v1alpha1";
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = "App";
export const PLURAL = "apps";

/** A Go-style duration as used by Flux's `interval` ("30s", "5m", "1h30m"). */
export const DURATION_PATTERN = "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$";
const DURATION = new RegExp(DURATION_PATTERN);
/** spec.source.git.path's rule, said by validateSpec and by the CRD's CEL rule. */
export const PATH_INSIDE = "must not contain '..'";
/** spec.interval's range, said by validateSpec and by the CRD's CEL rule. */
export const INTERVAL_RANGE = "must be between 1s and 8760h (a year)";

const secretName = z
  .string()
  .min(1)
  .max(253)
  .regex(DNS_SUBDOMAIN)
  .describe("Name of a Secret in the App's namespace.");

export const SecretRef = z
  .object({ name: secretName })
  .describe(
    "Reference to a Secret in the App's namespace. For Git: keys `token`, or `username` and `password`.",
  );

export const SecretKeyRef = z
  .object({
    name: secretName,
    key: z.string().min(1).default("webhookURL").describe("Key in the Secret's data."),
  })
  .describe("Reference to one key of a Secret in the App's namespace.");

export const GitSource = z
  .object({
    url: z
      .string()
      .min(1)
      .regex(/^https?:\/\//, "must be an http(s) URL (plumb speaks Git smart HTTP)")
      .describe("Repository URL, served over Git smart HTTP (https://host/org/repo.git)."),
    ref: z
      .string()
      .min(1)
      .default("HEAD")
      .describe(
        "Branch (main or refs/heads/main), tag (refs/tags/v1), full commit SHA, or HEAD for the remote's default branch.",
      ),
    path: z
      .string()
      .max(4096)
      .default(".")
      .refine((p) => !p.split("/").includes(".."), PATH_INSIDE)
      .describe(
        "Directory in the repository: a Kustomize overlay (kustomization.yaml), a Helm chart (Chart.yaml), or plain .yaml, .yml and .json manifests (recursively).",
      ),
    secretRef: SecretRef.optional(),
  })
  .describe("A Git repository: plain manifests, a Kustomize overlay or a Helm chart.");

export const ImageSource = z
  .object({
    repository: z.string().min(1).describe("Image repository, e.g. registry.example.com/org/web."),
    tag: z.string().min(1).default("latest").describe("Tag to deploy; resolved to a digest."),
    port: z.number().int().min(1).max(65535).default(8080).describe("Container port."),
    replicas: z.number().int().min(0).max(1000).default(1).describe("Deployment replicas."),
    env: z.record(z.string(), z.string()).optional().describe("Container environment variables."),
    healthCheck: z
      .object({ path: z.string().startsWith("/").default("/") })
      .optional()
      .describe("HTTP readiness probe on the container port."),
    domain: z.string().min(1).optional().describe("Host name; when set an Ingress is rendered."),
    secretRef: SecretRef.optional(),
  })
  .describe("A single container image rendered to a Deployment, Service and optional Ingress.");

/** A chart version constraint: an exact version or a semver range ("1.4.2", "~1.4", ">=2 <3", "*"). */
const CHART_VERSION = /^[0-9A-Za-z.+\-*^~<>=|, xX]+$/;

export const ChartSource = z
  .object({
    repository: z
      .string()
      .min(1)
      .regex(
        /^(https?|oci):\/\//,
        "must be an https:// Helm repository or an oci:// registry (http:// for local ones)",
      )
      .describe(
        "Helm chart repository (https://charts.example.com, serving index.yaml) or OCI registry path (oci://registry.example.com/org/charts).",
      ),
    name: z
      .string()
      .min(1)
      .max(250)
      .regex(/^[a-zA-Z0-9][a-zA-Z0-9._-]*$/, "must be a chart name")
      .describe("Chart name."),
    version: z
      .string()
      .min(1)
      .max(200)
      .regex(CHART_VERSION, "must be a version or a semver range")
      .default("*")
      .describe(
        "Exact chart version or semver range (~1.4, ^2, >=2 <3, *); the highest match is rendered.",
      ),
    secretRef: SecretRef.optional(),
  })
  .describe("A packaged Helm chart from a chart repository or an OCI registry.");

export const KustomizeOverrides = z
  .object({
    images: z
      .array(
        z.object({
          name: z.string().min(1).describe("Image name as written in the manifests (no tag)."),
          newName: z.string().min(1).optional(),
          newTag: z.string().min(1).optional(),
          digest: z.string().min(1).optional(),
        }),
      )
      .optional()
      .describe(
        "Image overrides, as kustomize's images field (replace an entry of the same name).",
      ),
    patches: z
      .array(
        z.object({
          patch: z.string().min(1).describe("A strategic merge patch or a JSON 6902 patch (YAML)."),
          target: z
            .object({
              group: z.string().optional(),
              version: z.string().optional(),
              kind: z.string().optional(),
              name: z.string().optional(),
              namespace: z.string().optional(),
              labelSelector: z.string().optional(),
              annotationSelector: z.string().optional(),
            })
            .optional(),
        }),
      )
      .optional()
      .describe("Inline patches appended to the kustomization's patches."),
  })
  .describe("Overrides applied to the kustomization at source.git.path (as in Flux and Argo CD).");

export const HelmOptions = z
  .object({
    releaseName: z
      .string()
      .min(1)
      .max(53)
      .regex(DNS_LABEL, "must be a DNS label (Helm's release name rule)")
      .optional()
      .describe("Release name (.Release.Name); defaults to the App's name."),
    valuesFiles: z
      .array(z.string().min(1))
      .optional()
      .describe(
        "Values files merged over the chart's values.yaml, in order; paths relative to the chart (inside the repository, or inside the packaged chart).",
      ),
    values: z
      .looseObject({})
      .meta({ "x-kubernetes-preserve-unknown-fields": true })
      .optional()
      .describe("Inline values, merged last."),
  })
  .describe("How a Helm chart is rendered (helm template).");

/**
 * The kinds of spec.source, by field: exactly one is set. A kind is this entry, its description
 * for people (sources.ts) and its loop side (src/reconcile/sources/).
 */
export const SOURCE_KINDS = {
  git: GitSource,
  image: ImageSource,
  app: AppSource,
  chart: ChartSource,
} as const;
export type SourceKindName = keyof typeof SOURCE_KINDS;
export const SOURCE_KIND_NAMES = Object.keys(SOURCE_KINDS) as SourceKindName[];

/** "a, b, c and d" (or "a, b, c or d"). */
function spoken(items: readonly string[], last: string): string {
  return items.length < 2
    ? items.join("")
    : `${items.slice(0, -1).join(", ")} ${last} ${items.at(-1)}`;
}

/** The message of the exactly-one-source rule (zod refine and the CRD's CEL rule). */
export const ONE_SOURCE = `exactly one of ${spoken(
  SOURCE_KIND_NAMES.map((k) => `source.${k}`),
  "and",
)} must be set`;

export const Source = z
  .object({
    ...(Object.fromEntries(SOURCE_KIND_NAMES.map((k) => [k, SOURCE_KINDS[k].optional()])) as {
      [K in SourceKindName]: z.ZodOptional<(typeof SOURCE_KINDS)[K]>;
    }),
    kustomize: KustomizeOverrides.optional(),
    helm: HelmOptions.optional(),
  })
  .refine((s) => SOURCE_KIND_NAMES.filter((k) => s[k] !== undefined).length === 1, {
    message: ONE_SOURCE,
  })
  .refine((s) => s.kustomize === undefined || s.git !== undefined, {
    message: "source.kustomize applies to a Git source (a kustomization at source.git.path)",
    path: ["kustomize"],
  })
  .refine((s) => s.helm === undefined || s.git !== undefined || s.chart !== undefined, {
    message: "source.helm applies to source.chart or a Git path holding Chart.yaml",
    path: ["helm"],
  })
  .describe(
    `Where the desired state comes from: exactly one of ${spoken(SOURCE_KIND_NAMES, "or")}.`,
  );

/** Secret keys a kubeconfig is looked up under when secretRef.key is not given (Flux's order). */
export const KUBECONFIG_KEYS = ["value", "value.yaml"] as const;

/** A Secret key: what Kubernetes allows in a Secret's data. */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;

export const KubeconfigSecretRef = z
  .object({
    name: secretName,
    key: z
      .string()
      .min(1)
      .max(253)
      .regex(SECRET_KEY)
      .optional()
      .describe('Key holding the kubeconfig; when absent, "value", then "value.yaml" (Flux).'),
  })
  .describe("A Secret in the App's namespace holding a kubeconfig for the destination cluster.");

const CLUSTER_SHAPE = 'must be "" (the cluster plumb talks to) or {secretRef: {name, key}}';

export const RemoteCluster = z
  .object(
    { secretRef: KubeconfigSecretRef },
    { error: (iss) => (iss.code === "invalid_type" ? CLUSTER_SHAPE : undefined) },
  )
  .describe(
    "Another cluster, reached with the kubeconfig in a Secret: its server, CA and bearer token (or, on Node, client certificate). Exec plugins, auth providers, file paths and insecure-skip-tls-verify are refused.",
  );

export const Destination = z
  .object({
    namespace: z
      .string()
      .regex(DNS_LABEL)
      .max(63)
      .optional()
      .describe("Namespace for namespaced objects without one. Defaults to the App's namespace."),
    cluster: z
      .preprocess((v) => (v === "" ? undefined : v), RemoteCluster.optional())
      .describe(
        'Target cluster: absent or "" for the cluster plumb talks to (where the App lives); {secretRef: {name, key}} for another cluster. The App, its status, Events and Lease stay where the App lives.',
      ),
  })
  .describe("Where the rendered objects go.");

export const SyncPolicy = z
  .object({
    automated: z
      .boolean()
      .default(true)
      .describe("Apply a new revision or changed spec without being asked."),
    prune: z
      .boolean()
      .default(true)
      .describe(
        "Delete objects this App applied before and no longer renders, and its objects when the App is deleted.",
      ),
    selfHeal: z
      .boolean()
      .default(false)
      .describe("Re-apply when live objects drift from the desired state."),
    requiresApproval: z
      .boolean()
      .default(false)
      .describe("Hold each new revision until approved (an Approve operation)."),
    allowEmpty: z
      .boolean()
      .default(false)
      .describe(
        "Apply (and prune to) a render with no objects; off, an empty render fails instead of pruning everything.",
      ),
  })
  .describe("When and how plumb applies.");

/** How many sync windows an App may have. */
export const MAX_SYNC_WINDOWS = 50;

export const SYNC_WINDOW_KINDS = ["allow", "deny"] as const;

export const SyncWindow = z
  .object({
    kind: z
      .enum(SYNC_WINDOW_KINDS)
      .describe(
        "allow: automated syncs happen only inside an allow window (when any exists). deny: no automated sync while the window is open; a deny window wins over an allow window.",
      ),
    schedule: z
      .string()
      .min(1)
      .max(256)
      .describe(
        'When the window opens: a 5-field cron expression (minute hour day-of-month month day-of-week, e.g. "0 22 * * 1-5") or @hourly, @daily, @weekly, @monthly, @yearly, in timeZone.',
      ),
    duration: z
      .string()
      .regex(DURATION, "must be a duration such as 30m, 1h or 8h30m")
      .refine((d) => {
        if (!DURATION.test(d)) return true;
        const ms = parseDuration(d);
        return ms >= 60_000 && ms <= MAX_INTERVAL_MS;
      }, "must be between 1m and 8760h (a year)")
      .describe("How long the window stays open from each time the schedule fires (e.g. 8h)."),
    timeZone: z
      .string()
      .min(1)
      .max(64)
      .default("UTC")
      .describe("IANA time zone of the schedule (e.g. Europe/Berlin); DST is followed."),
    manualSync: z
      .boolean()
      .default(false)
      .describe(
        "Let operations (Sync, Deploy, Rollback, Approve from the HTTP API, the CLI or kubectl) through while this window blocks automated sync.",
      ),
    description: z.string().max(255).optional().describe("Why the window exists (e.g. a ticket)."),
  })
  .superRefine((w, ctx) => {
    const zone = timeZoneIssue(w.timeZone);
    if (zone) ctx.addIssue({ code: "custom", path: ["timeZone"], message: zone });
    const issue = zone ? undefined : cronIssue(w.schedule, w.timeZone);
    if (issue) ctx.addIssue({ code: "custom", path: ["schedule"], message: issue });
  })
  .describe(
    "A time window that allows or denies automated sync (Argo CD's sync windows). Outside a window, status shows OutOfSync and nextSyncWindow.",
  );

export const OPERATION_TYPES = [
  "Sync",
  "Deploy",
  "Rollback",
  "Restart",
  "Approve",
  "Reject",
] as const;

export const Operation = z
  .object({
    id: z.string().min(1).max(128).describe("Unique id; an operation runs once per id."),
    type: z.enum(OPERATION_TYPES).describe("What to do."),
    revision: z
      .string()
      .min(1)
      .optional()
      .describe(
        "Rollback: a revision from status.previousRevisions. Approve, Reject: the held revision.",
      ),
    requestedBy: z.string().max(256).optional().describe("Who asked, for the record."),
    requestedAt: z.string().optional().describe("RFC 3339 time of the request."),
  })
  .describe("A one-shot request, written by the API or kubectl; consumed once by id.");

export const NOTIFY_EVENTS = [
  "Synced",
  "Failed",
  "Degraded",
  "Recovered",
  "Held",
  "DriftCorrected",
  "Healthy",
] as const;

/**
 * What a chat target's `on` defaults to: every event but Healthy, which follows most syncs and
 * matters to commit statuses (success once a rollout finished) more than to a channel.
 */
export const CHAT_EVENTS = NOTIFY_EVENTS.filter((e) => e !== "Healthy");
/** What a commit-status target's `on` defaults to: each changes the state of a commit. */
export const COMMIT_STATUS_EVENTS = NOTIFY_EVENTS.filter((e) => e !== "DriftCorrected");

/** What each event of a target's `on` (spec.notifications.<target>.on) means (the CRD's description, README). */
export const NOTIFY_EVENT_MEANINGS: Record<(typeof NOTIFY_EVENTS)[number], string> = {
  Synced:
    "a run applied a revision other than the last applied one, without a failure; or a failure cleared with nothing new to apply (in sync again)",
  Failed:
    "a run failed (Ready=False with reason InvalidSpec, SourceFailed, RenderFailed, ApplyFailed, PruneFailed or HostConflict); again only when the reason or message changes",
  Degraded: "health became Degraded",
  Recovered:
    "the App is healthy again (no failure, health Healthy) after a Failed or Degraded (status.openAlert), once, however many runs it took (e.g. Degraded, Progressing, Healthy)",
  Held: "a new revision is held for approval (status.heldRevision)",
  DriftCorrected: "selfHeal re-applied drifted or deleted objects",
  Healthy:
    "health became Healthy without a failure, in a run that neither applied a new revision (Synced says so) nor recovered (Recovered says so): e.g. the rollout of the applied revision finished",
};

/** The `on` list of a target whose default is `defaults`. */
function onEvents(defaults: readonly (typeof NOTIFY_EVENTS)[number][]) {
  return z
    .array(z.enum(NOTIFY_EVENTS))
    .default([...defaults])
    .describe(
      `Transitions to announce (default: ${defaults.length === NOTIFY_EVENTS.length ? "all" : defaults.join(", ")}). ${NOTIFY_EVENTS.map((e) => `${e}: ${NOTIFY_EVENT_MEANINGS[e]}.`).join(" ")} A state that persists is never announced again.`,
    );
}

/** A Secret key holding a credential, `key` defaulting to `key`. */
function secretKeyRef(key: string, what: string) {
  return z
    .object({
      name: secretName,
      key: z.string().min(1).default(key).describe("Key in the Secret's data."),
    })
    .describe(`Secret key (in the App's namespace) holding ${what}.`);
}

/**
 * What every notification target's entry under spec.notifications has: the Secret key holding
 * its address or token, and the transitions it announces. A target adds its own fields.
 */
export const NotificationTargetBase = z.object({
  secretRef: SecretKeyRef,
  on: onEvents(CHAT_EVENTS),
});

export const SlackTarget = NotificationTargetBase.extend({
  secretRef: SecretKeyRef.describe("Secret key holding the Slack incoming-webhook URL."),
  channel: z.string().optional().describe("Channel override."),
}).describe("Slack, through an incoming webhook; a Held alert carries Approve and Reject buttons.");

export const GenericTarget = NotificationTargetBase.extend({
  secretRef: secretKeyRef("address", "the URL every event is POSTed to"),
  signingSecretRef: secretKeyRef(
    "token",
    "the HMAC key: each request then carries X-Signature: sha256=<hex HMAC-SHA256 of the body>",
  ).optional(),
}).describe(
  "Any HTTP endpoint: one JSON event per transition ({app, event, message, revision?, severity}), signed when signingSecretRef is set (Flux's generic-hmac).",
);

export const MSTeamsTarget = NotificationTargetBase.extend({
  secretRef: secretKeyRef("address", "the Power Automate workflow webhook URL"),
}).describe("Microsoft Teams: an Adaptive Card through a Power Automate workflow webhook.");

export const DiscordTarget = NotificationTargetBase.extend({
  secretRef: secretKeyRef("address", "the Discord webhook URL"),
  username: z.string().min(1).max(80).optional().describe("Overrides the webhook's name."),
}).describe("Discord, through a webhook (Execute Webhook): the message and an embed.");

export const GoogleChatTarget = NotificationTargetBase.extend({
  secretRef: secretKeyRef("address", "the Google Chat space's incoming-webhook URL"),
}).describe("Google Chat, through a space's incoming webhook: a text message.");

/** A commit-status target: a token, the API base URL, and the events that change a state. */
function commitStatusTarget(provider: string, apiDefault: string) {
  return z
    .object({
      secretRef: secretKeyRef(
        "token",
        `a ${provider} token allowed to write commit statuses (sent only to apiUrl)`,
      ),
      apiUrl: z
        .string()
        .regex(/^https?:\/\/[^/?#]+(\/[^?#]*)?$/, "must be an http(s) URL without query")
        .optional()
        .describe(`The API's base URL (default: ${apiDefault}).`),
      on: onEvents(COMMIT_STATUS_EVENTS),
    })
    .describe(
      `${provider} commit statuses on the revision of each event, for an App whose source is a Git repository on ${provider} (the repository is spec.source.git.url's path): pending while the applied revision is Progressing or Held, success once Healthy, failure when it failed or is Degraded; context plumb/<namespace>/<name>.`,
    );
}

export const GitHubTarget = commitStatusTarget(
  "GitHub",
  "https://api.github.com for github.com, else https://<git host>/api/v3 (GitHub Enterprise Server)",
);
export const GitLabTarget = commitStatusTarget("GitLab", "https://<git host>/api/v4");
export const GiteaTarget = commitStatusTarget("Gitea", "https://<git host>/api/v1");

/**
 * The notification targets, by their key under spec.notifications (also what
 * status.pendingNotifications[].target names). A target is this entry and its implementation
 * (src/reconcile/targets/). An App names several by giving several keys.
 */
export const NOTIFICATION_TARGETS = {
  slack: SlackTarget,
  generic: GenericTarget,
  msteams: MSTeamsTarget,
  discord: DiscordTarget,
  googlechat: GoogleChatTarget,
  github: GitHubTarget,
  gitlab: GitLabTarget,
  gitea: GiteaTarget,
} as const;
export type TargetName = keyof typeof NOTIFICATION_TARGETS;
export const TARGET_NAMES = Object.keys(NOTIFICATION_TARGETS) as TargetName[];

export const Notifications = z
  .object(
    Object.fromEntries(
      TARGET_NAMES.map((name) => [name, NOTIFICATION_TARGETS[name].optional()]),
    ) as {
      [K in TargetName]: z.ZodOptional<(typeof NOTIFICATION_TARGETS)[K]>;
    },
  )
  .describe("Where to announce transitions (never every run): one entry per target.");

export const AppSpec = z
  .object({
    source: Source,
    destination: Destination.default({}),
    interval: z
      .string()
      .regex(DURATION, "must be a duration such as 30s, 5m or 1h")
      .refine((d) => {
        if (!DURATION.test(d)) return true; // the regex has said what is wrong
        const ms = parseDuration(d);
        return ms >= 1000 && ms <= MAX_INTERVAL_MS;
      }, INTERVAL_RANGE)
      .default("5m")
      .describe("How often a scheduled run reconciles this App."),
    syncPolicy: SyncPolicy.default({
      automated: true,
      prune: true,
      selfHeal: false,
      requiresApproval: false,
      allowEmpty: false,
    }),
    freeze: z.boolean().default(false).describe("Apply nothing; report health and sync only."),
    adopt: z
      .boolean()
      .default(false)
      .describe(
        "Take over objects of the same name that another tool manages (Helm, Argo CD, Flux, another field manager): their fields move to plumb's field manager, immutable selectors are kept. Off, such an object is refused. Objects made by hand with kubectl are taken over either way.",
      ),
    operation: Operation.optional(),
    notifications: Notifications.optional(),
    syncWindows: z
      .array(SyncWindow)
      .max(MAX_SYNC_WINDOWS)
      .optional()
      .describe(
        "When automated sync may run: a matching deny window wins; when any allow window exists, automated sync runs only inside one. Health is observed at all times.",
      ),
  })
  .describe("Desired state of an App.");

export const SYNC_STATUSES = ["Synced", "OutOfSync", "Held", "Unknown"] as const;
export const HEALTH_STATUSES = [
  "Healthy",
  "Progressing",
  "Degraded",
  "Suspended",
  "Missing",
  "Unknown",
] as const;
export const RESOURCE_STATUSES = [
  "Synced",
  "OutOfSync",
  "Failed",
  "Pruned",
  "PruneFailed",
  "PruneSkipped",
] as const;

export const ObjectRef = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  namespace: z.string().optional(),
  name: z.string(),
});

/** metav1.Condition (https://github.com/kubernetes/enhancements/tree/master/keps/sig-api-machinery/1623-standardize-conditions). */
export const Condition = z.object({
  type: z.string(),
  status: z.enum(["True", "False", "Unknown"]),
  reason: z.string(),
  message: z.string(),
  lastTransitionTime: z.string(),
  observedGeneration: z.number().int().optional(),
});

/** One field that differs: what applying would store and what is live (never a Secret's values). */
export const FieldChange = z.object({
  path: z.string().describe("Field path, e.g. spec.replicas."),
  desired: z
    .string()
    .optional()
    .describe(
      "What applying would store (the API server's dry run); absent when it removes the field.",
    ),
  live: z.string().optional(),
  manager: z.string().optional().describe("Field manager that owns the live value."),
});

/** A remote cluster the inventory has objects on, and the Secret that reaches it. */
export const ClusterRecord = z.object({
  server: z.string().describe("API server URL, as the kubeconfig names it."),
  secretRef: KubeconfigSecretRef,
});

export const ResourceStatus = ObjectRef.extend({
  status: z.enum(RESOURCE_STATUSES),
  health: z.enum(HEALTH_STATUSES).optional(),
  message: z.string().optional(),
  changes: z
    .array(FieldChange)
    .optional()
    .describe(
      "Fields that applying the source would change, with desired and live values (the approval preview of a Held App).",
    ),
});

export const DriftEntry = ObjectRef.extend({
  fields: z.array(FieldChange),
});

/** An inventory entry: an object the App applied, and the hash of the form it applied. */
export const InventoryEntry = ObjectRef.extend({
  hash: z
    .string()
    .optional()
    .describe(
      "Hash of the rendered object last applied: unchanged means its live differences are drift.",
    ),
  finished: z
    .boolean()
    .optional()
    .describe(
      "A Job that finished and was removed by its ttlSecondsAfterFinished: done (Synced, not recreated) until its rendered form changes.",
    ),
  cluster: z
    .string()
    .optional()
    .describe(
      "The API server URL of the cluster the object is on; absent for the cluster the App lives in.",
    ),
});

export const OperationState = z.object({
  id: z.string(),
  type: z.enum(OPERATION_TYPES),
  phase: z.enum(["Running", "Succeeded", "Failed"]),
  message: z.string().optional(),
  revision: z.string().optional(),
  requestedBy: z.string().optional(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
});

export const RevisionRecord = z.object({
  revision: z.string(),
  objectHash: z.string().optional(),
  deployedAt: z.string(),
});

/** Problems that a later healthy run announces as Recovered. */
export const ALERT_EVENTS = ["Failed", "Degraded"] as const;

export const OpenAlert = z
  .object({
    event: z.enum(ALERT_EVENTS).describe("The last problem announced: Failed or Degraded."),
    message: z.string().describe("What was announced."),
    since: z.string().describe("RFC 3339 time of the first problem since the App was healthy."),
  })
  .describe(
    "A Failed or Degraded that has not recovered yet; the first run that finds the App healthy announces Recovered and clears it.",
  );

export const DriftCorrection = z
  .object({
    at: z.string().describe("RFC 3339 time of the correction."),
    count: z.number().int().describe("Objects re-applied."),
    objects: z
      .array(z.string())
      .max(10)
      .describe(
        'What was re-applied and who had changed it, e.g. "Deployment team-a/web: spec.replicas by kubectl"; the first 10.',
      ),
  })
  .describe("The last selfHeal correction: drifted or deleted objects plumb re-applied.");

export const PendingNotification = z
  .object({
    target: z
      .enum(TARGET_NAMES as [TargetName, ...TargetName[]])
      .optional()
      .describe(
        "The target it is for (its key under spec.notifications); absent in entries written before targets were named: slack.",
      ),
    event: z.enum(NOTIFY_EVENTS),
    message: z.string(),
    at: z.string().describe("RFC 3339 time of the transition it announces."),
    attempts: z.number().int().describe("Deliveries tried so far."),
    revision: z
      .string()
      .optional()
      .describe(
        "The revision it is about (Held: the revision held; the buttons are sent only while it is still held).",
      ),
  })
  .describe("A notification whose delivery failed, retried on later runs for 1 hour.");

export const AppStatus = z
  .object({
    observedGeneration: z.number().int().optional(),
    syncStatus: z.enum(SYNC_STATUSES).optional(),
    healthStatus: z.enum(HEALTH_STATUSES).optional(),
    healthReason: z.string().optional(),
    revision: z
      .string()
      .optional()
      .describe(
        "Revision last applied: a commit SHA or an image digest (Flux: status.lastAppliedRevision).",
      ),
    shortRevision: z
      .string()
      .optional()
      .describe(
        "status.revision as plumb shows it (7 hex characters of a commit; accepted back wherever a revision is asked for): the Revision column of kubectl get apps.",
      ),
    observedRevision: z
      .string()
      .optional()
      .describe(
        "Revision the source named at the last run, applied or not (Flux: status.lastAttemptedRevision).",
      ),
    heldRevision: z.string().optional().describe("Revision waiting for approval."),
    heldObjectHash: z.string().optional(),
    rejectedRevision: z
      .string()
      .optional()
      .describe("Revision a Reject turned down; it is not held or announced again."),
    rejectedObjectHash: z.string().optional(),
    rolledBackFrom: z
      .string()
      .optional()
      .describe("Revision a Rollback moved away from; automated sync waits for a newer one."),
    rolledBackFromObjectHash: z
      .string()
      .optional()
      .describe(
        "objectHash of the render a Rollback moved away from: a later commit that renders the same objects does not undo the rollback.",
      ),
    failedObjectHash: z
      .string()
      .optional()
      .describe(
        "objectHash of a render whose apply failed in a way retrying cannot fix (an immutable field, an invalid object): automated sync waits for another render or a Sync operation.",
      ),
    previousRevisions: z.array(RevisionRecord).optional().describe("Applied before; newest first."),
    objectHash: z.string().optional().describe("Hash of the rendered set last applied."),
    observedObjectHash: z.string().optional(),
    inventory: z
      .array(InventoryEntry)
      .optional()
      .describe("Objects this App applied and owns, with the cluster each is on."),
    clusters: z
      .array(ClusterRecord)
      .optional()
      .describe(
        "The other clusters the inventory has objects on, with the kubeconfig Secret that reaches each (to prune there after a destination change or on deletion).",
      ),
    resources: z.array(ResourceStatus).optional(),
    drift: z.array(DriftEntry).optional(),
    url: z.string().optional(),
    operationState: OperationState.optional(),
    conditions: z.array(Condition).optional(),
    lastSyncedAt: z.string().optional(),
    nextSyncWindow: z
      .string()
      .optional()
      .describe("While a sync window holds automated sync back: when it may next run (RFC 3339)."),
    lastReconciledAt: z
      .string()
      .optional()
      .describe(
        "When a run last changed this status (a run that finds nothing new writes nothing); after a failed run, when it failed (the backoff counts from it).",
      ),
    nextReconcileAt: z
      .string()
      .optional()
      .describe(
        "No longer written: the schedule is derived from the App's uid, its interval and the clock (the HTTP API's nextReconcileAt gives the next run).",
      ),
    redeliverAt: z
      .string()
      .optional()
      .describe(
        "While notifications wait in pendingNotifications: when a run retries them (RFC 3339; a scheduled tick runs the App then).",
      ),
    failures: z.number().int().optional().describe("Consecutive failed runs (for backoff)."),
    openAlert: OpenAlert.optional(),
    lastDriftCorrection: DriftCorrection.optional(),
    pendingNotifications: z
      .array(PendingNotification)
      .max(10)
      .optional()
      .describe(
        "Notifications not delivered yet (at most 10, oldest dropped first): each is sent once on a later run, for up to 1 hour after its transition.",
      ),
  })
  .describe("Observed state, written by plumb.");

export type AppSpec = z.output<typeof AppSpec>;
export type AppSpecInput = z.input<typeof AppSpec>;
export type AppStatus = z.output<typeof AppStatus>;
export type ObjectRef = z.output<typeof ObjectRef>;
export type ClusterRecord = z.output<typeof ClusterRecord>;
export type KubeconfigSecretRef = z.output<typeof KubeconfigSecretRef>;
export type Condition = z.output<typeof Condition>;
export type ResourceStatus = z.output<typeof ResourceStatus>;
export type DriftEntry = z.output<typeof DriftEntry>;
export type FieldChange = z.output<typeof FieldChange>;
export type InventoryEntry = z.output<typeof InventoryEntry>;
export type OperationState = z.output<typeof OperationState>;
export type Operation = z.output<typeof Operation>;
export type RevisionRecord = z.output<typeof RevisionRecord>;
export type GitSource = z.output<typeof GitSource>;
export type ImageSource = z.output<typeof ImageSource>;
export type ChartSource = z.output<typeof ChartSource>;
export type KustomizeOverrides = z.output<typeof KustomizeOverrides>;
export type HelmOptions = z.output<typeof HelmOptions>;
export type SyncWindow = z.output<typeof SyncWindow>;
export type SyncStatus = (typeof SYNC_STATUSES)[number];
export type HealthStatus = (typeof HEALTH_STATUSES)[number];
export type NotifyEvent = (typeof NOTIFY_EVENTS)[number];
export type Notifications = z.output<typeof Notifications>;
/** The entry of target `K` under spec.notifications, parsed and defaulted. */
export type TargetConfig<K extends TargetName> = z.output<(typeof NOTIFICATION_TARGETS)[K]>;
export type OpenAlert = z.output<typeof OpenAlert>;
export type PendingNotification = z.output<typeof PendingNotification>;
export type DriftCorrection = z.output<typeof DriftCorrection>;

/** The App object as read from the API server. `spec` is unvalidated until validateSpec. */
export interface App {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: unknown;
  status?: AppStatus;
}
