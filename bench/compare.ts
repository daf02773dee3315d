// The cost of a full comparison: the requests a due run makes to compare every
// rendered object with its live state — with nothing changed, with one object edited by another
// field manager, and as the approval preview of a one-object change — and what it concluded.
import type { DiscoveryCache } from "../src/kube/index.ts";
import { CASES, type Case } from "./fixtures.ts";
import type { Kube } from "./kube.ts";
import { measuredRun, type Runner, type RunSample } from "./reconcile-bench.ts";

/** What a run concluded: the App's sync status and the paths status.drift lists. */
export interface Verdict {
  syncStatus: string | undefined;
  drift: string[];
  /** status.resources messages of the objects that are not Synced. */
  messages: string[];
}

export interface ComparisonCase {
  app: string;
  objects: number;
  /** Full comparisons with nothing changed (after the App settled). */
  steady: RunSample[];
  steadyVerdict: Verdict;
  /** A full comparison after another field manager set one Deployment's first container image. */
  drifted: RunSample;
  driftedVerdict: Verdict;
  /** requiresApproval: a commit that changes one Deployment's image, held with its preview. */
  held: RunSample;
  heldVerdict: Verdict;
}

/**
 * 10 Deployments whose manifests carry values the API server stores differently: a probe's
 * `initialDelaySeconds: 0` (omitted), `env: []` (omitted), `cpu: 1000m` (stored "1") and
 * `memory: 0.5Gi` (stored "512Mi"). After the first sync another field manager co-owns each
 * cpu request, written as "1".
 */
export const normalised: Case = {
  name: "normalised-10",
  files: () => normalisedFiles(),
  bump: (tag) => ({ "deployments/norm-0.yaml": normalisedFiles(tag)["deployments/norm-0.yaml"]! }),
  deployment: "norm-0",
  imageFor: (tag) => `nginx:${tag}`,
};

function normalisedFiles(tag = "1.27"): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 10; i++) {
    const image = i === 0 ? `nginx:${tag}` : "nginx:1.27";
    files[`deployments/norm-${i}.yaml`] = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: norm-${i}
spec:
  replicas: 1
  selector:
    matchLabels: {app: norm-${i}}
  template:
    metadata:
      labels: {app: norm-${i}}
    spec:
      containers:
        - name: web
          image: ${image}
          env: []
          ports:
            - containerPort: 8080
          resources:
            requests: {cpu: 1000m, memory: 0.5Gi}
          readinessProbe:
            httpGet: {path: /, port: 8080}
            initialDelaySeconds: 0
`;
  }
  return files;
}

const HOUR = 3_600_000;

async function verdict(kube: Kube, ns: string, name: string): Promise<Verdict> {
  const s = (await kube.getApp(ns, name)).status;
  return {
    syncStatus: s?.syncStatus,
    drift: (s?.drift ?? []).flatMap((d) => d.fields.map((f) => `${d.kind}/${d.name} ${f.path}`)),
    messages: (s?.resources ?? [])
      .filter((r) => r.status !== "Synced")
      .map((r) => `${r.kind}/${r.name}: ${r.message ?? r.status}`),
  };
}

/**
 * Measures one case in namespace `ns`: first sync, settle (runs until 3 in a row write nothing),
 * then full comparisons (the clock past status.nextReconcileAt) in the three situations.
 */
async function comparisonCase(
  r: Runner,
  c: Case,
  ns: string,
  discovery: DiscoveryCache,
  log: (s: string) => void,
): Promise<ComparisonCase> {
  const name = c.name;
  const repo = await r.git.createRepo(`cmp-${c.name}`, c.files(ns));
  await r.kube.namespace(ns);
  await r.kube.createApp(ns, name, {
    source: { git: { url: repo.url, ref: "main" } },
    interval: "1h",
  });
  const ref = { namespace: ns, name };
  let clock = Date.now();
  const due = () => {
    clock += 2 * HOUR;
    return new Date(clock);
  };
  await measuredRun(r, ref, discovery);
  if (c === normalised) {
    for (let i = 0; i < 10; i++) {
      await r.kube.api(
        "PATCH",
        `/apis/apps/v1/namespaces/${ns}/deployments/norm-${i}?fieldManager=bench-other`,
        {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: `norm-${i}`, namespace: ns },
          spec: {
            template: {
              spec: { containers: [{ name: "web", resources: { requests: { cpu: "1" } } }] },
            },
          },
        },
        "application/apply-patch+yaml",
      );
    }
  }
  // Settle health (Deployments roll out) with full comparisons, as a 1-minute interval would.
  for (let quiet = 0, i = 0; quiet < 3 && i < 60; i++) {
    await measuredRun(r, ref, discovery, due(), true);
    const health = (await r.kube.getApp(ns, name)).status?.healthStatus;
    quiet = health !== "Progressing" ? quiet + 1 : 0;
    await new Promise((res) => setTimeout(res, 300));
  }
  const steady: RunSample[] = [];
  for (let i = 0; i < 3; i++) steady.push(await measuredRun(r, ref, discovery, due(), true));
  const steadyVerdict = await verdict(r.kube, ns, name);
  log(`  ${c.name}: steady ${steadyVerdict.syncStatus}, ${steadyVerdict.drift.length} drifted`);

  await r.kube.api(
    "PATCH",
    `/apis/apps/v1/namespaces/${ns}/deployments/${c.deployment}?fieldManager=bench-edit`,
    // The first container's image: every case's manifest sets it, where replicas is left to an
    // HPA in podinfo-webapp (a field the App does not set is not drift, as in Argo CD and Flux).
    [
      {
        op: "replace",
        path: "/spec/template/spec/containers/0/image",
        value: "registry.invalid/drifted:1",
      },
    ],
    "application/json-patch+json",
  );
  const drifted = await measuredRun(r, ref, discovery, due(), true);
  const driftedVerdict = await verdict(r.kube, ns, name);

  await r.kube.api(
    "PATCH",
    `/apis/plumb.dev/v1alpha1/namespaces/${ns}/apps/${name}`,
    { spec: { syncPolicy: { requiresApproval: true } } },
    "application/merge-patch+json",
  );
  await r.git.commit(repo.name, c.bump("bench-held", ns));
  const held = await measuredRun(r, ref, discovery, due(), true);
  const heldVerdict = await verdict(r.kube, ns, name);
  return {
    app: `${ns}/${name}`,
    objects: (await r.kube.getApp(ns, name)).status?.inventory?.length ?? 0,
    steady,
    steadyVerdict,
    drifted,
    driftedVerdict,
    held,
    heldVerdict,
  };
}

const SHORT: Record<string, string> = {
  guestbook: "gb",
  "podinfo-webapp": "pod",
  "generated-50": "gen",
  "normalised-10": "norm",
};

/** Every case (guestbook, podinfo-webapp, generated-50, normalised-10), in fresh namespaces. */
export async function comparisonCost(
  r: Runner,
  discovery: () => DiscoveryCache,
  log: (s: string) => void,
): Promise<ComparisonCase[]> {
  const out: ComparisonCase[] = [];
  for (const c of [...CASES, normalised]) {
    out.push(await comparisonCase(r, c, `bench-cmp-${SHORT[c.name]}`, discovery(), log));
  }
  return out;
}
