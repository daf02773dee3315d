// Reconciling an AppSet: its generators read (cluster Secrets, a Git repository's directories, a
// forge's open pull requests), its Apps applied, deleted or released as the plan says
// (plan/appset.ts), its status and Events written. Triggered as Apps are: the tick (before the
// Apps, so an App it makes is synced in the same tick) and webhooks.
import { parse as parseYaml } from "yaml";
import {
  APPSET_API_VERSION,
  APPSET_KIND,
  APPSET_LABEL,
  type AppSetObject,
  AppSetSpec,
  type AppSetStatus,
  type Generator,
} from "../app/appset.ts";
import { GROUP, KUBECONFIG_KEYS, VERSION } from "../app/index.ts";
import { type KubeObject, nameOf } from "../core/index.ts";
import {
  APPSET_HASH_ANNOTATION,
  type AppSetPlan,
  type AppSetRef,
  appSetStatus,
  desiredApps,
  directoryParams,
  type ExistingApp,
  matchDirectories,
  type Params,
  type PullRequestInfo,
  planAppSet,
  pullRequestParams,
  withLabels,
} from "../plan/index.ts";
import type { Ports } from "./ports.ts";
import { readSourceAuth } from "./source.ts";

/** What reconciling AppSets needs: the cluster, Git, and HTTP for the forges' pull request lists. */
export type AppSetPorts = Pick<Ports, "kube" | "git" | "redactor" | "log"> & {
  /** HTTP for pullRequest generators (default: the global fetch). */
  fetch?: typeof fetch;
};

/** What one AppSet reconcile did, as a result line. */
export interface AppSetResult {
  appset: string;
  outcome: "Synced" | "Failed" | "Gone";
  created: string[];
  updated: string[];
  deleted: string[];
  released: string[];
  conflicts: string[];
  /** Why nothing (or not everything) was changed. */
  error?: string;
}

const APP_API_VERSION = `${GROUP}/${VERSION}`;

/** The AppSets in `namespace` (all namespaces when undefined); none when the CRD is not installed. */
export async function listAppSets(
  ports: Pick<Ports, "kube">,
  namespace?: string,
): Promise<AppSetObject[]> {
  const found = await ports.kube.list(APPSET_API_VERSION, APPSET_KIND, "", namespace);
  return found as unknown as AppSetObject[];
}

/**
 * Reconciles every AppSet (of `namespace`, or all; or exactly `sets`, already listed: a tick's
 * due ones), one after the other; one AppSet's failure does not stop the others. `only` narrows
 * them (a webhook's choice: appSetsForWebhook).
 */
export async function reconcileAppSets(
  ports: AppSetPorts,
  now: Date,
  options: {
    namespace?: string | undefined;
    sets?: AppSetObject[];
    only?: (sets: AppSetObject[]) => AppSetObject[];
    onResult?: (r: AppSetResult) => void;
  } = {},
): Promise<AppSetResult[]> {
  let sets = options.sets ?? (await listAppSets(ports, options.namespace));
  if (options.only) sets = options.only(sets);
  const results: AppSetResult[] = [];
  for (const s of sets) {
    const r = await reconcileAppSet(s, ports, now).catch(
      (e): AppSetResult => ({
        ...empty(nameOf(s.metadata)),
        outcome: "Failed",
        error: redact(ports, e instanceof Error ? e.message : String(e)),
      }),
    );
    results.push(r);
    options.onResult?.(r);
  }
  return results;
}

/**
 * The Apps that AppSet results changed and that should run now rather than at their slot:
 * created and updated ones (to sync), deleted ones (their finalizer prunes in a run), each
 * once, by namespace and name.
 */
export function appsToRun(results: readonly AppSetResult[]): Array<{
  namespace: string;
  name: string;
}> {
  const seen = new Set<string>();
  const out: Array<{ namespace: string; name: string }> = [];
  for (const r of results) {
    const namespace = r.appset.slice(0, r.appset.indexOf("/"));
    for (const name of [...r.created, ...r.updated, ...r.deleted]) {
      const id = `${namespace}/${name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push({ namespace, name });
    }
  }
  return out;
}

/**
 * One AppSet: its spec checked, its generators' parameters read, the Apps the template makes
 * from them checked as Apps, then created/updated (server-side apply, field manager plumb),
 * deleted or released (deletePolicy keep: ownerReference, label and digest removed by a merge
 * patch with the App's resourceVersion), never touching an App it did not make. A spec, generator
 * or template error changes no App: it is the ErrorOccurred condition and a Warning Event. The
 * status (conditions, Apps, observedGeneration) is written when it changed.
 */
export async function reconcileAppSet(
  appset: AppSetObject,
  ports: AppSetPorts,
  now: Date,
): Promise<AppSetResult> {
  const id = nameOf(appset.metadata);
  const result = empty(id);
  const ref: AppSetRef = {
    name: appset.metadata.name,
    namespace: appset.metadata.namespace,
    uid: appset.metadata.uid ?? "",
    generation: appset.metadata.generation,
  };
  const parsed = AppSetSpec.safeParse(appset.spec ?? {});
  let errors: string[] = [];
  let plan: AppSetPlan | undefined;
  const failed: Array<{ name: string; error: string }> = [];
  if (!parsed.success) {
    errors = parsed.error.issues.map((i) => `spec.${i.path.join(".")}: ${i.message}`);
  } else {
    const spec = parsed.data;
    const params: Params[] = [];
    for (const [i, g] of spec.generators.entries()) {
      try {
        params.push(...(await generate(g, appset.metadata.namespace, ports)));
      } catch (e) {
        errors.push(`spec.generators[${i}]: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    const desired = errors.length === 0 ? desiredApps(ref, spec.template, params) : undefined;
    if (desired && !desired.ok) errors = desired.errors;
    if (desired?.ok) {
      const existing = (await ports.kube.listApps(
        appset.metadata.namespace,
      )) as unknown as ExistingApp[];
      plan = planAppSet(ref, desired.apps, existing, spec.deletePolicy);
      const attempt = async (name: string, fn: () => Promise<unknown>) => {
        try {
          await fn();
          return true;
        } catch (e) {
          failed.push({ name, error: redact(ports, e instanceof Error ? e.message : String(e)) });
          return false;
        }
      };
      for (const app of plan.create) {
        const name = app.metadata.name;
        if (await attempt(name, () => ports.kube.apply(app as unknown as KubeObject)))
          result.created.push(name);
      }
      for (const app of plan.update) {
        const name = app.metadata.name;
        if (await attempt(name, () => ports.kube.apply(app as unknown as KubeObject)))
          result.updated.push(name);
      }
      for (const name of plan.delete) {
        const appRef = { apiVersion: APP_API_VERSION, kind: "App", name, namespace: ref.namespace };
        if (await attempt(name, () => ports.kube.delete(appRef))) result.deleted.push(name);
      }
      for (const name of plan.release) {
        const live = existing.find((a) => a.metadata.name === name);
        if (await attempt(name, () => release(ports, ref, live))) result.released.push(name);
      }
      result.conflicts = plan.conflicts;
    }
  }
  const outcome = { errors, failed, ...(plan ? { plan } : {}) };
  const status = appSetStatus(appset.status, ref, outcome, now);
  if (errors.length > 0 || failed.length > 0) {
    result.outcome = "Failed";
    result.error = redact(
      ports,
      [...errors, ...failed.map((f) => `App ${f.name}: ${f.error}`)].join("\n"),
    );
  }
  await emitEvents(ports, appset, result, status);
  if (JSON.stringify(status) !== JSON.stringify(appset.status ?? {})) {
    await ports.kube.writeObjectStatus(
      appset as unknown as KubeObject,
      redactStatus(ports, status),
    );
  }
  return result;
}

/** The parameter sets of one generator. Throws Error with a message for the AppSet's condition. */
async function generate(g: Generator, namespace: string, ports: AppSetPorts): Promise<Params[]> {
  if (g.list) return g.list.elements.map((e) => ({ ...e }));
  if (g.clusters) return clusterParams(g.clusters.selector.matchLabels, namespace, ports);
  if (g.git) {
    const git = g.git;
    if (!ports.git.directories) throw new Error("this runtime's Git port lists no directories");
    const auth = git.secretRef
      ? await readSourceAuth(ports, namespace, git.secretRef.name)
      : undefined;
    const source = { url: git.repoURL, ref: git.revision, path: "." };
    const commit = await ports.git.resolve(source, auth);
    const dirs = await ports.git.directories(source, commit, auth);
    return matchDirectories(dirs, git.directories).map(directoryParams);
  }
  if (g.pullRequest) {
    const prs = await openPullRequests(g.pullRequest, namespace, ports);
    return prs.map(pullRequestParams);
  }
  return [];
}

/**
 * One parameter set per kubeconfig Secret of the namespace with the labels (key `value` or
 * `value.yaml`, as spec.destination.cluster.secretRef reads it): name and cluster (the Secret's
 * name), server (the current context's cluster server, "" when the kubeconfig names none).
 */
async function clusterParams(
  matchLabels: Record<string, string>,
  namespace: string,
  ports: AppSetPorts,
): Promise<Params[]> {
  const selector = Object.entries(matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const secrets = await ports.kube.list("v1", "Secret", selector, namespace);
  const out: Params[] = [];
  for (const s of secrets.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))) {
    const data = (s["data"] ?? {}) as Record<string, string>;
    const key = KUBECONFIG_KEYS.find((k) => data[k] !== undefined);
    if (!key) continue;
    const name = s.metadata.name;
    out.push({ name, cluster: name, server: kubeconfigServer(decodeBase64(data[key] ?? "")) });
  }
  return out;
}

/** The server of the kubeconfig's current context (else its first cluster), "" when none. */
function kubeconfigServer(text: string): string {
  try {
    const doc = parseYaml(text) as {
      "current-context"?: string;
      contexts?: Array<{ name?: string; context?: { cluster?: string } }>;
      clusters?: Array<{ name?: string; cluster?: { server?: string } }>;
    };
    const ctx = doc.contexts?.find((c) => c.name === doc["current-context"]);
    const cluster =
      doc.clusters?.find((c) => c.name === ctx?.context?.cluster) ?? doc.clusters?.[0];
    return cluster?.cluster?.server ?? "";
  } catch {
    return "";
  }
}

type PullRequestSpec = NonNullable<Generator["pullRequest"]>;

/** Pages of the pull request list read at most (100 each). */
const PR_PAGES = 10;

/**
 * The open pull requests of the generator's repository through the forge's list API (GitHub
 * `GET /repos/{o}/{r}/pulls?state=open`, GitLab `GET /projects/:id/merge_requests?state=opened`,
 * Gitea `GET /repos/{o}/{r}/pulls?state=open`), 100 a page, filtered by its labels. The token,
 * from the Secret tokenRef names, is sent only to the API URL and registered for redaction.
 */
async function openPullRequests(
  spec: PullRequestSpec,
  namespace: string,
  ports: AppSetPorts,
): Promise<PullRequestInfo[]> {
  const provider = spec.github ? "github" : spec.gitlab ? "gitlab" : "gitea";
  const p = spec.github ?? spec.gitlab ?? spec.gitea;
  if (!p) throw new Error("pullRequest names no provider (github, gitlab or gitea)");
  let token: string | undefined;
  if (p.tokenRef) {
    const data = await ports.kube.getSecret(namespace, p.tokenRef.secretName);
    token = data?.[p.tokenRef.key];
    if (!token) {
      throw new Error(`Secret ${namespace}/${p.tokenRef.secretName} has no key ${p.tokenRef.key}`);
    }
    ports.redactor?.add(token);
  }
  const base = (
    p.api ??
    {
      github: "https://api.github.com",
      gitlab: "https://gitlab.com/api/v4",
      gitea: "https://gitea.com/api/v1",
    }[provider]
  ).replace(/\/+$/, "");
  let path: string;
  if (provider === "gitlab") {
    if (!p.project) throw new Error("pullRequest.gitlab needs project");
    path = `/projects/${encodeURIComponent(p.project)}/merge_requests?state=opened`;
  } else {
    if (!p.owner || !p.repo) throw new Error(`pullRequest.${provider} needs owner and repo`);
    path = `/repos/${encodeURIComponent(p.owner)}/${encodeURIComponent(p.repo)}/pulls?state=open`;
  }
  const headers: Record<string, string> = { accept: "application/json", "user-agent": "plumb" };
  if (token) {
    if (provider === "gitlab") headers["private-token"] = token;
    else headers["authorization"] = provider === "github" ? `Bearer ${token}` : `token ${token}`;
  }
  const http = ports.fetch ?? fetch;
  const found: PullRequestInfo[] = [];
  for (let page = 1; page <= PR_PAGES; page++) {
    const per = provider === "gitea" ? "limit" : "per_page";
    const res = await http(`${base}${path}&${per}=100&page=${page}`, { headers });
    if (!res.ok)
      throw new Error(`listing pull requests: HTTP ${res.status} from the ${provider} API`);
    const list = (await res.json()) as unknown;
    if (!Array.isArray(list))
      throw new Error(`the ${provider} API answered no list of pull requests`);
    for (const item of list) {
      const pr = readPullRequest(provider, item as RawPullRequest);
      if (pr) found.push(pr);
    }
    if (list.length < 100) break;
  }
  return withLabels(found, p.labels).sort((a, b) => a.number - b.number);
}

interface RawPullRequest {
  number?: number;
  iid?: number;
  head?: { ref?: string; sha?: string };
  source_branch?: string;
  sha?: string;
  labels?: Array<string | { name?: string }>;
}

/** A list entry as PullRequestInfo (GitHub/Gitea: number, head.ref, head.sha; GitLab: iid, source_branch, sha). */
function readPullRequest(provider: string, raw: RawPullRequest): PullRequestInfo | undefined {
  const number = provider === "gitlab" ? raw.iid : raw.number;
  const branch = provider === "gitlab" ? raw.source_branch : raw.head?.ref;
  const headSha = provider === "gitlab" ? raw.sha : raw.head?.sha;
  if (typeof number !== "number" || !branch || !headSha) return undefined;
  const labels = (raw.labels ?? []).map((l) => (typeof l === "string" ? l : (l.name ?? "")));
  return { number, branch, headSha, labels };
}

/** Releases an App (deletePolicy keep): this AppSet's ownerReference, label and digest removed. */
async function release(ports: AppSetPorts, appset: AppSetRef, live: ExistingApp | undefined) {
  if (!live) return;
  const refs = (live.metadata.ownerReferences ?? []).filter(
    (r) => (r as { uid?: string }).uid !== appset.uid,
  );
  const raw = live as unknown as { metadata: { resourceVersion?: string } };
  await ports.kube.mergePatch(
    {
      apiVersion: APP_API_VERSION,
      kind: "App",
      name: live.metadata.name,
      namespace: appset.namespace,
    },
    {
      metadata: {
        resourceVersion: raw.metadata.resourceVersion,
        ownerReferences: refs.length > 0 ? refs : null,
        labels: { [APPSET_LABEL]: null },
        annotations: { [APPSET_HASH_ANNOTATION]: null },
      },
    },
  );
}

/**
 * Events on the AppSet: one Normal per App created, updated, deleted or released; a Warning
 * when the error or conflict it reports is new (the Ready condition's message changed), so a
 * tick that finds the same problem again adds no Event.
 */
async function emitEvents(
  ports: AppSetPorts,
  appset: AppSetObject,
  r: AppSetResult,
  status: AppSetStatus,
) {
  const emit = (type: "Normal" | "Warning", reason: string, message: string) =>
    ports.kube
      .emitEvent(appset, { type, reason, message: redact(ports, message) })
      .catch((e) =>
        ports.log?.({ msg: "AppSet event failed", appset: r.appset, error: String(e) }),
      );
  for (const n of r.created) await emit("Normal", "AppCreated", `App ${n} created`);
  for (const n of r.updated) await emit("Normal", "AppUpdated", `App ${n} updated`);
  for (const n of r.deleted) await emit("Normal", "AppDeleted", `App ${n} deleted`);
  for (const n of r.released)
    await emit("Normal", "AppReleased", `App ${n} released (deletePolicy keep)`);
  const before = appset.status?.conditions?.find((c) => c.type === "Ready");
  const after = status.conditions?.find((c) => c.type === "Ready");
  if (after?.status === "False" && after.message !== before?.message) {
    await emit("Warning", after.reason, after.message);
  }
}

function redact(ports: AppSetPorts, text: string): string {
  return ports.redactor?.redact(text) ?? text;
}

function redactStatus(ports: AppSetPorts, status: AppSetStatus): AppSetStatus {
  return ports.redactor ? (ports.redactor.redactValue(status) as AppSetStatus) : status;
}

function empty(appset: string): AppSetResult {
  return {
    appset,
    outcome: "Synced",
    created: [],
    updated: [],
    deleted: [],
    released: [],
    conflicts: [],
  };
}

function decodeBase64(value: string): string {
  const bin = atob(value);
  return new TextDecoder().decode(Uint8Array.from(bin, (c) => c.charCodeAt(0)));
}
