// An app source (spec.source.app) rendered to objects: its services, the workloads its needs
// expand into, their password Secrets, and a CronJob per job. Pure and deterministic: the same
// spec and pins give the same objects with the same key order.
import type { AppJob, AppService, AppSource } from "../../app/index.ts";
import { err, type Issue, type KubeObject, ok, type Result } from "../../core/index.ts";
import type { ParsedObject } from "../manifests.ts";
import { expandNeeds, needName } from "./needs.ts";
import { type ImagePin, pinFor } from "./pins.ts";
import { resourcesFor } from "./sizes.ts";
import {
  container,
  type EnvVar,
  type IngressSettings,
  podSpec,
  renderWorkload,
  selectorLabels,
  type Workload,
} from "./workload.ts";

export interface AppRenderInput {
  /** The App's name: the instance label, and the prefix of its needs' objects. */
  app: string;
  source: AppSource;
  /** What each image request resolved to (see imageRequests and the image port's pin). */
  pins: readonly ImagePin[];
  settings: IngressSettings;
}

export type AppRenderResult = Result<ParsedObject[], Issue[]>;

/** Longest StatefulSet name: its Pods carry the label controller-revision-hash=<name>-<10 chars>. */
const MAX_STATEFULSET_NAME = 52;
const ORIGIN = "spec.source.app";

/**
 * Renders an app source. Each service becomes a workload (see renderWorkload): its image
 * pinned to the digest of its pin, `PORT` set to its port (Knative's and Heroku's contract),
 * readiness over HTTP on healthCheck.path or else TCP on the port, the needs' variables, then
 * its own env and secretEnv (sorted by name; a variable of its own replaces a generated one in
 * place, so $(VAR) references still resolve). Each job becomes a CronJob running its service's
 * image and environment (or its own image). Objects carry Kubernetes' recommended labels;
 * namespaces and tracking labels are added later by renderObjects.
 * @returns the objects with their origin ("spec.source.app.services[web]"), or every issue:
 *   an image with no pin, a name that collides with a need's objects, an App name too long for
 *   its needs' objects.
 */
export function renderApp(input: AppRenderInput): AppRenderResult {
  const { app, source, pins, settings } = input;
  const issues: Issue[] = [];
  const pullSecrets = source.imagePullSecrets ?? [];
  const needs = expandNeeds(app, source.needs, pullSecrets);
  const needNames = new Set(needs.workloads.map((w) => w.name));
  for (const need of source.needs) {
    const name = needName(app, need);
    if (name.length > MAX_STATEFULSET_NAME)
      issues.push({
        code: "InvalidSpec",
        path: "metadata.name",
        message: `the App name is too long for needs: ${need} (its objects are named ${name}, at most ${MAX_STATEFULSET_NAME} characters)`,
      });
  }
  const out: ParsedObject[] = [];
  const images = new Map<string, { image: string; version: string }>();
  const image = (repository: string, tag: string, digest: string | undefined, path: string) => {
    const pin = pinFor(pins, { repository, tag, digest });
    if (!pin) {
      // The revision rendered predates this image in the spec: a new revision fixes it.
      issues.push({
        code: "RenderError",
        path,
        message: `no digest is pinned for ${repository}:${tag}`,
      });
      return undefined;
    }
    return { image: `${repository}@${pin.digest}`, version: pin.tag };
  };

  source.services.forEach((s, i) => {
    const path = `${ORIGIN}.services.${i}`;
    if (needNames.has(s.name)) {
      issues.push({
        code: "InvalidSpec",
        path: `${path}.name`,
        message: `"${s.name}" is the name of a workload that needs: renders; choose another`,
      });
      return;
    }
    const pinned = image(s.image, s.tag, s.digest, `${path}.tag`);
    if (!pinned) return;
    images.set(s.name, pinned);
    const workload = serviceWorkload(s, pinned, needs.env, pullSecrets);
    for (const object of renderWorkload(app, workload, settings))
      out.push({ object, origin: `${ORIGIN}.services[${s.name}]` });
  });
  for (const w of needs.workloads) {
    for (const object of renderWorkload(app, w, settings))
      out.push({ object, origin: `${ORIGIN}.needs` });
  }
  for (const object of needs.secrets) out.push({ object, origin: `${ORIGIN}.needs` });

  source.jobs.forEach((j, i) => {
    const path = `${ORIGIN}.jobs.${i}`;
    if (needNames.has(j.name)) {
      issues.push({
        code: "InvalidSpec",
        path: `${path}.name`,
        message: `"${j.name}" is the name of a workload that needs: renders; choose another`,
      });
      return;
    }
    const base = j.service ? source.services.find((s) => s.name === j.service) : undefined;
    const pinned = base
      ? images.get(base.name)
      : image(j.image ?? "", j.tag ?? "latest", j.digest, `${path}.tag`);
    if (!pinned) return;
    out.push({
      object: renderCronJob(app, j, base, pinned, needs.env, pullSecrets),
      origin: `${ORIGIN}.jobs[${j.name}]`,
    });
  });
  if (issues.length > 0) return err(issues);
  // Plain trees: no value shared between two places (a YAML dump would write anchors).
  return ok(out.map((p) => ({ ...p, object: JSON.parse(JSON.stringify(p.object)) })));
}

function serviceWorkload(
  s: AppService,
  pinned: { image: string; version: string },
  needsEnv: readonly EnvVar[],
  pullSecrets: readonly string[],
): Workload {
  const generated: EnvVar[] = [];
  if (s.port !== undefined) generated.push({ name: "PORT", value: String(s.port) });
  generated.push(...needsEnv);
  return {
    name: s.name,
    component: s.port === undefined ? "worker" : "web",
    kind: "Deployment",
    image: pinned.image,
    version: pinned.version,
    port: s.port === undefined ? undefined : { number: s.port, name: "http", servicePort: 80 },
    command: s.command,
    args: s.args,
    env: mergeEnv(generated, ownEnv(s.env, s.secretEnv)),
    envFrom: s.envFrom ?? [],
    replicas: s.replicas,
    resources: resourcesFor(s.size, s.resources),
    readiness:
      s.port === undefined
        ? undefined
        : s.healthCheck
          ? { kind: "http", path: s.healthCheck.path, port: "http" }
          : { kind: "tcp", port: "http" },
    liveness:
      s.liveness === undefined
        ? undefined
        : s.liveness.path !== undefined
          ? { kind: "http", path: s.liveness.path, port: "http" }
          : { kind: "tcp", port: "http" },
    volume: s.volume,
    domains: s.domains ?? [],
    imagePullSecrets: [...pullSecrets],
  };
}

/**
 * A job's CronJob: its service's image, environment and size unless the job sets its own (the
 * job's variables win by name). Pods restart Never; a run that fails is retried by the Job's
 * backoff, and runs never overlap unless concurrencyPolicy says so.
 */
function renderCronJob(
  app: string,
  j: AppJob,
  base: AppService | undefined,
  pinned: { image: string; version: string },
  needsEnv: readonly EnvVar[],
  pullSecrets: readonly string[],
): KubeObject {
  const labels = { ...selectorLabels(app, j.name), "app.kubernetes.io/component": "job" };
  // The job's own variables win by name, whichever of env and secretEnv each is in.
  const without = <T>(rec: Record<string, T> | undefined, drop: object | undefined) =>
    Object.fromEntries(Object.entries(rec ?? {}).filter(([k]) => !(drop && k in drop)));
  const own = ownEnv(
    { ...without(base?.env, j.secretEnv), ...(j.env ?? {}) },
    { ...without(base?.secretEnv, j.env), ...(j.secretEnv ?? {}) },
  );
  const c = container({
    name: j.name,
    image: pinned.image,
    command: j.command ?? (j.service ? base?.command : undefined),
    args: j.args ?? (j.service ? base?.args : undefined),
    env: mergeEnv([...needsEnv], own),
    envFrom: [...new Set([...(base?.envFrom ?? []), ...(j.envFrom ?? [])])],
    resources: resourcesFor(j.size ?? base?.size ?? "small", j.resources ?? base?.resources),
  });
  const spec: Record<string, unknown> = { schedule: j.schedule };
  if (j.timeZone !== undefined) spec["timeZone"] = j.timeZone;
  spec["concurrencyPolicy"] = j.concurrencyPolicy;
  spec["jobTemplate"] = {
    metadata: { labels: { ...labels } },
    spec: {
      template: {
        metadata: { labels: { ...labels } },
        spec: podSpec([c], pullSecrets, { restartPolicy: "Never" }),
      },
    },
  };
  return {
    apiVersion: "batch/v1",
    kind: "CronJob",
    metadata: { name: j.name, labels },
    spec,
  };
}

/** A service's or job's own variables: env, then secretEnv, each sorted by name. */
function ownEnv(
  env: Record<string, string> | undefined,
  secretEnv: Record<string, { name: string; key: string; optional: boolean }> | undefined,
): EnvVar[] {
  const byName = <T>(rec: Record<string, T>) =>
    Object.entries(rec).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const out: EnvVar[] = byName(env ?? {}).map(([name, value]) => ({ name, value }));
  for (const [name, ref] of byName(secretEnv ?? {})) {
    const secretKeyRef: { name: string; key: string; optional?: boolean } = {
      name: ref.name,
      key: ref.key,
    };
    if (ref.optional) secretKeyRef.optional = true;
    out.push({ name, valueFrom: { secretKeyRef } });
  }
  return out;
}

/** `generated` with each variable `own` also defines replaced in place, then the rest of `own`. */
function mergeEnv(generated: readonly EnvVar[], own: readonly EnvVar[]): EnvVar[] {
  const mine = new Map(own.map((e) => [e.name, e]));
  const out = generated.map((e) => mine.get(e.name) ?? e);
  const used = new Set(out.map((e) => e.name));
  return [...out, ...own.filter((e) => !used.has(e.name))];
}
