// What an AppSet wants: its generators' parameter sets turned into Apps (Argo CD's
// ApplicationSet: applicationset/generators, utils.Render), and the plan that brings the Apps it
// made there with exact ownership (applicationset_controller.go createOrUpdateInCluster,
// deleteInCluster). Pure: no I/O; `now` is an argument.
import picomatch from "picomatch";
import {
  APPSET_API_VERSION,
  APPSET_KIND,
  APPSET_LABEL,
  type AppSetSpec,
  type AppSetStatus,
} from "../app/appset.ts";
import { type Condition, GROUP, VERSION, validateSpec } from "../app/index.ts";
import { canonicalJson, isDnsSubdomain } from "../core/index.ts";
import { setCondition } from "./conditions.ts";

/** One generator's output: parameter name → value (Argo CD's flat params). */
export type Params = Record<string, string>;

/** Annotation holding a digest of what the AppSet last applied, so a change is seen exactly. */
export const APPSET_HASH_ANNOTATION = `${GROUP}/appset-hash`;

/**
 * `text` with every `{{ name }}` replaced by `params[name]` (Argo CD's fasttemplate rendering,
 * utils.Render: the tag is trimmed; a tag without a parameter is kept as written).
 */
export function substitute(text: string, params: Params): string {
  return text.replace(/\{\{([^{}]*)\}\}/g, (tag, name: string) => {
    const value = params[name.trim()];
    return value === undefined ? tag : value;
  });
}

/** `value` with substitute applied to every string in it (keys too, as Argo CD renders JSON). */
export function substituteDeep(value: unknown, params: Params): unknown {
  if (typeof value === "string") return substitute(value, params);
  if (Array.isArray(value)) return value.map((v) => substituteDeep(v, params));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [substitute(k, params), substituteDeep(v, params)]),
    );
  }
  return value;
}

/**
 * A directory basename as an object name: lower case, every character outside [-a-z0-9.]
 * replaced by "-", at most 253 characters, "-" and "." trimmed from both ends (Argo CD
 * utils.SanitizeName, its path.basenameNormalized).
 */
export function sanitizeName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^-a-z0-9.]/g, "-")
    .slice(0, 253)
    .replace(/^[-.]+|[-.]+$/g, "");
}

/**
 * A branch name as a slug: lower case, runs of characters outside [a-z0-9] as one "-", at most
 * 50 characters, no "-" at either end (Argo CD's branch_slug: gosimple/slug with MaxLength 50).
 */
export function branchSlug(branch: string): string {
  return branch
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 50)
    .replace(/-+$/, "");
}

/** Parameters of one directory (Argo CD's Git directory generator): path, path.basename, path.basenameNormalized. */
export function directoryParams(path: string): Params {
  const basename = path.split("/").pop() ?? path;
  return { path, "path.basename": basename, "path.basenameNormalized": sanitizeName(basename) };
}

/**
 * The directories that match some include pattern and no exclude pattern (Argo CD
 * filterApps). Patterns are globs over the whole "/"-separated path, "*" not crossing "/"
 * (Go's path.Match, which Argo CD uses; here picomatch).
 */
export function matchDirectories(
  directories: readonly string[],
  patterns: ReadonlyArray<{ path: string; exclude?: boolean }>,
): string[] {
  const include = patterns.filter((p) => !p.exclude).map((p) => picomatch(p.path, { dot: true }));
  const exclude = patterns.filter((p) => p.exclude).map((p) => picomatch(p.path, { dot: true }));
  return directories.filter((d) => include.some((m) => m(d)) && !exclude.some((m) => m(d)));
}

/** An open pull request, as the provider's list API gives it. */
export interface PullRequestInfo {
  number: number;
  branch: string;
  headSha: string;
  labels: string[];
}

/**
 * Parameters of one pull request (Argo CD's pull request generator): number, branch,
 * branch_slug, head_sha, head_short_sha (8 characters), head_short_sha_7.
 */
export function pullRequestParams(pr: PullRequestInfo): Params {
  return {
    number: String(pr.number),
    branch: pr.branch,
    branch_slug: branchSlug(pr.branch),
    head_sha: pr.headSha,
    head_short_sha: pr.headSha.slice(0, 8),
    head_short_sha_7: pr.headSha.slice(0, 7),
  };
}

/** The pull requests carrying every label of `labels` (Argo CD's labels filter). */
export function withLabels(
  prs: readonly PullRequestInfo[],
  labels: readonly string[] | undefined,
): PullRequestInfo[] {
  if (!labels || labels.length === 0) return [...prs];
  return prs.filter((pr) => labels.every((l) => pr.labels.includes(l)));
}

/** The AppSet as far as planning needs it. */
export interface AppSetRef {
  name: string;
  namespace: string;
  uid: string;
  generation?: number | undefined;
}

/** An App object to apply (server-side), as the AppSet makes it. */
export interface DesiredApp {
  apiVersion: string;
  kind: "App";
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    annotations: Record<string, string>;
    ownerReferences: OwnerReference[];
  };
  spec: Record<string, unknown>;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/**
 * The Apps the template makes from `paramSets`, each checked as an App (name a DNS subdomain,
 * spec by the App schema) with the label APPSET_LABEL, an ownerReference to the AppSet
 * (controller: true, blockOwnerDeletion: true, as Argo CD's SetControllerReference) and the
 * digest annotation. Two parameter sets making one name is an error (Argo CD refuses duplicate
 * names too). The AppSet's name and namespace are no parameters.
 * @returns the Apps, or the errors (each naming the parameter set): then nothing is changed
 */
export function desiredApps(
  appset: AppSetRef,
  template: AppSetSpec["template"],
  paramSets: readonly Params[],
): { ok: true; apps: DesiredApp[] } | { ok: false; errors: string[] } {
  const apps: DesiredApp[] = [];
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const params of paramSets) {
    const which = `parameters ${JSON.stringify(params)}`;
    const name = substitute(template.metadata.name, params);
    if (!isDnsSubdomain(name)) {
      errors.push(`${which}: App name "${name}" is not a valid object name (DNS subdomain)`);
      continue;
    }
    if (seen.has(name)) {
      errors.push(`${which}: App name "${name}" is made by more than one parameter set`);
      continue;
    }
    seen.add(name);
    const spec = substituteDeep(template.spec, params) as Record<string, unknown>;
    const checked = validateSpec(spec);
    if (!checked.ok) {
      const issues = checked.error.map((i) => `${i.path}: ${i.message}`).join("; ");
      errors.push(`${which}: App "${name}": ${issues}`);
      continue;
    }
    const labels = substituteDeep(template.metadata.labels ?? {}, params) as Record<string, string>;
    const annotations = substituteDeep(template.metadata.annotations ?? {}, params) as Record<
      string,
      string
    >;
    const app: DesiredApp = {
      apiVersion: `${GROUP}/${VERSION}`,
      kind: "App",
      metadata: {
        name,
        namespace: appset.namespace,
        labels: { ...labels, [APPSET_LABEL]: appset.name },
        annotations,
        ownerReferences: [
          {
            apiVersion: APPSET_API_VERSION,
            kind: APPSET_KIND,
            name: appset.name,
            uid: appset.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec,
    };
    app.metadata.annotations = { ...annotations, [APPSET_HASH_ANNOTATION]: digest(app) };
    apps.push(app);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, apps };
}

/** An App that exists in the AppSet's namespace, as read from the API server. */
export interface ExistingApp {
  metadata: {
    name: string;
    uid?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: unknown[];
    deletionTimestamp?: string;
  };
}

/** Whether `app` is controlled by this AppSet (its uid, as metav1.IsControlledBy compares). */
export function ownedBy(app: ExistingApp, appset: AppSetRef): boolean {
  return (app.metadata.ownerReferences ?? []).some((r) => {
    const o = r as Partial<OwnerReference>;
    return o.controller === true && o.kind === APPSET_KIND && o.uid === appset.uid;
  });
}

/** What reconciling an AppSet does to its Apps. */
export interface AppSetPlan {
  /** Apps to create, or to apply again because the template's output changed. */
  create: DesiredApp[];
  update: DesiredApp[];
  /** Apps it made whose parameters vanished: deleted (deletePolicy delete). */
  delete: string[];
  /** ... or released: ownerReference and label removed (deletePolicy keep). */
  release: string[];
  /** Desired names held by an App this AppSet did not make: left untouched. */
  conflicts: string[];
  /** Apps it made that are as desired. */
  unchanged: string[];
}

/**
 * The plan from the desired Apps and the Apps of the namespace. An App of a desired name that
 * this AppSet does not control is a conflict and is never written (Argo CD: "already exists
 * and is not owned by this ApplicationSet"); an App it controls that no parameter set makes
 * any more is deleted, or released under deletePolicy keep; one being deleted is left alone.
 */
export function planAppSet(
  appset: AppSetRef,
  desired: readonly DesiredApp[],
  existing: readonly ExistingApp[],
  deletePolicy: "delete" | "keep",
): AppSetPlan {
  const plan: AppSetPlan = {
    create: [],
    update: [],
    delete: [],
    release: [],
    conflicts: [],
    unchanged: [],
  };
  const byName = new Map(existing.map((a) => [a.metadata.name, a]));
  const wanted = new Set<string>();
  for (const d of desired) {
    wanted.add(d.metadata.name);
    const live = byName.get(d.metadata.name);
    if (!live) plan.create.push(d);
    else if (!ownedBy(live, appset)) plan.conflicts.push(d.metadata.name);
    else if (live.metadata.deletionTimestamp) plan.unchanged.push(d.metadata.name);
    else if (live.metadata.annotations?.[APPSET_HASH_ANNOTATION] !== digestOf(d)) {
      plan.update.push(d);
    } else plan.unchanged.push(d.metadata.name);
  }
  for (const live of existing) {
    const name = live.metadata.name;
    if (wanted.has(name) || !ownedBy(live, appset) || live.metadata.deletionTimestamp) continue;
    (deletePolicy === "keep" ? plan.release : plan.delete).push(name);
  }
  for (const list of [plan.delete, plan.release, plan.conflicts, plan.unchanged]) list.sort();
  return plan;
}

/** The conditions and status an AppSet gets after a reconcile. */
export interface AppSetOutcome {
  /** Why no App was changed: generator or template errors. */
  errors?: string[];
  /** The plan carried out (absent when errors stopped it). */
  plan?: AppSetPlan;
  /** Apps whose write failed, with the reason. */
  failed?: Array<{ name: string; error: string }>;
}

/**
 * The AppSet's status after `outcome`: Ready True (reason AppsUpToDate) when every App is as
 * desired; ErrorOccurred True with the reason (ApplicationGenerationFailed for generator or
 * template errors, ApplicationConflict for Apps it did not make, ApplicationUpdateFailed for a
 * failed write), as Argo CD's ApplicationSet conditions. `apps` lists the Apps it made and
 * keeps (created, updated, unchanged; a create that failed left out), sorted; when errors stopped it, the previous list stays.
 */
export function appSetStatus(
  previous: AppSetStatus | undefined,
  appset: AppSetRef,
  outcome: AppSetOutcome,
  now: Date,
): AppSetStatus {
  let conditions: Condition[] = [...(previous?.conditions ?? [])];
  const gen = appset.generation;
  let error: { reason: string; message: string } | undefined;
  if (outcome.errors && outcome.errors.length > 0) {
    error = { reason: "ApplicationGenerationFailed", message: outcome.errors.join("\n") };
  } else if (outcome.failed && outcome.failed.length > 0) {
    error = {
      reason: "ApplicationUpdateFailed",
      message: outcome.failed.map((f) => `App ${f.name}: ${f.error}`).join("\n"),
    };
  } else if (outcome.plan && outcome.plan.conflicts.length > 0) {
    error = {
      reason: "ApplicationConflict",
      message: `App(s) ${outcome.plan.conflicts.join(", ")} already exist and were not made by this AppSet; left untouched`,
    };
  }
  if (error) {
    conditions = setCondition(
      conditions,
      { type: "ErrorOccurred", status: "True", ...error },
      now,
      gen,
    );
    conditions = setCondition(conditions, { type: "Ready", status: "False", ...error }, now, gen);
  } else {
    const ok = {
      reason: "AppsUpToDate",
      message: "every App of this AppSet is as its template makes it",
    };
    conditions = setCondition(
      conditions,
      { type: "ErrorOccurred", status: "False", ...ok },
      now,
      gen,
    );
    conditions = setCondition(conditions, { type: "Ready", status: "True", ...ok }, now, gen);
  }
  const status: AppSetStatus = { conditions };
  if (gen !== undefined) status.observedGeneration = gen;
  if (outcome.plan) {
    const failed = new Set((outcome.failed ?? []).map((f) => f.name));
    const names = [
      ...outcome.plan.create.map((a) => a.metadata.name).filter((n) => !failed.has(n)),
      ...outcome.plan.update.map((a) => a.metadata.name),
      ...outcome.plan.unchanged,
    ];
    status.apps = [...new Set(names)].sort().map((name) => ({ name }));
  } else if (previous?.apps) status.apps = previous.apps;
  return status;
}

/** FNV-1a (32 bit, hex) over the App's canonical JSON, without the digest annotation itself. */
function digest(app: DesiredApp): string {
  const { [APPSET_HASH_ANNOTATION]: _, ...annotations } = app.metadata.annotations;
  const text = canonicalJson({ ...app, metadata: { ...app.metadata, annotations } });
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

function digestOf(app: DesiredApp): string {
  return app.metadata.annotations[APPSET_HASH_ANNOTATION] ?? digest(app);
}
