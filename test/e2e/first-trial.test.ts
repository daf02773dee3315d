// What a new user sees trying plumb: an object selfHeal re-created is not Missing, an App held
// before anything was applied is not Healthy, a frozen App says it is frozen, and the quick
// start's spec.source.app example runs without a registry.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { AppStatus } from "../../src/app/index.ts";
import { reconcileApp } from "../../src/reconcile/index.ts";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
} from "../support/git-server.ts";
import {
  api,
  createApp,
  createNamespace,
  deploymentImage,
  getApp,
  getObject,
  kubectl,
  patchAppSpec,
  realPorts,
} from "./support.ts";

let git: GitServer;
beforeAll(async () => {
  git = await startGitServer();
});
afterAll(async () => {
  await git?.stop();
});

const config = (greeting: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: guestbook-config\ndata:\n  greeting: ${greeting}\n`;
/** A ConfigMap and the guestbook's Service: both Healthy as soon as they exist. */
const files = () => ({
  "config.yaml": config("hello"),
  "guestbook-ui-svc.yaml": fixtureFiles(join(REAL_FIXTURES, "guestbook"))["guestbook-ui-svc.yaml"]!,
});
const minutes = (m: number) => new Date(Date.now() + m * 60_000);
/** A run; `compare`: a scheduled run whose slot came (a full comparison, drift included). */
const run = (ns: string, at = new Date(), compare = false) =>
  reconcileApp({ namespace: ns, name: "app" }, realPorts(), at, { compare });
const ready = (status: AppStatus | undefined) =>
  status?.conditions?.find((c) => c.type === "Ready");
const lines = (status: AppStatus | undefined) =>
  (status?.resources ?? []).map((r) => [`${r.kind} ${r.name}`, r.status, r.health, r.message]);

describe("an object selfHeal re-created", () => {
  it("is assessed as it exists after the run: Ready and Healthy, not Missing", async () => {
    const ns = "trial-heal";
    const repo = await git.createRepo(ns, files());
    await createNamespace(ns);
    await createApp(ns, "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { selfHeal: true },
    });
    const c1 = await repo.head();
    await run(ns);
    const svc = `/api/v1/namespaces/${ns}/services/guestbook-ui`;

    await api("DELETE", svc);
    await run(ns, minutes(10), true);
    expect(await getObject(svc)).toBeDefined();
    const healed = (await getApp(ns, "app")).status;
    expect(healed).toMatchObject({
      syncStatus: "Synced",
      healthStatus: "Healthy",
      healthReason: "all 2 objects healthy",
      lastDriftCorrection: { count: 1, objects: [`Service ${ns}/guestbook-ui: deleted`] },
    });
    expect(ready(healed)).toMatchObject({
      status: "True",
      reason: "Synced",
      message: `revision ${c1} is applied and healthy`,
    });
    expect(lines(healed)).toEqual([
      ["ConfigMap guestbook-config", "Synced", "Healthy", undefined],
      ["Service guestbook-ui", "Synced", "Healthy", undefined],
    ]);

    // Made again by hand with kubectl (without plumb's labels, so plumb finds it deleted):
    // selfHeal takes it over, and it is assessed as the API server stored it.
    await api("DELETE", svc);
    kubectl(["apply", "-n", ns, "-f", "-"], files()["guestbook-ui-svc.yaml"]);
    await run(ns, minutes(20), true);
    const adopted = await getObject(svc);
    expect(adopted?.metadata.labels?.["plumb.dev/app"]).toBe("app");
    const after = (await getApp(ns, "app")).status;
    expect(after).toMatchObject({ healthStatus: "Healthy", healthReason: "all 2 objects healthy" });
    expect(ready(after)).toMatchObject({
      status: "True",
      reason: "Synced",
      message: `revision ${c1} is applied and healthy`,
    });
  });
});

describe("an App held for approval before anything was applied", () => {
  it("is Missing and not Ready (reason Held) until approved; each object will be created", async () => {
    const ns = "trial-held";
    const repo = await git.createRepo(ns, files());
    await createNamespace(ns);
    await createApp(ns, "app", {
      source: { git: { url: repo.url } },
      syncPolicy: { requiresApproval: true },
    });
    const c1 = await repo.head();
    const create = `ConfigMap ${ns}/guestbook-config: will be created; Service ${ns}/guestbook-ui: will be created`;
    for (const at of [new Date(), minutes(10)]) {
      // The run that holds it, then a scheduled one while it waits.
      await run(ns, at, true);
      const held = (await getApp(ns, "app")).status;
      expect(held).toMatchObject({
        syncStatus: "Held",
        heldRevision: c1,
        healthStatus: "Missing",
        healthReason: create,
      });
      expect(ready(held)).toMatchObject({
        status: "False",
        reason: "Held",
        message: `revision ${c1} is held for approval; ${create}`,
      });
      expect(lines(held)).toEqual([
        ["ConfigMap guestbook-config", "OutOfSync", "Missing", "will be created"],
        ["Service guestbook-ui", "OutOfSync", "Missing", "will be created"],
      ]);
    }
    expect(await getObject(`/api/v1/namespaces/${ns}/services/guestbook-ui`)).toBeUndefined();

    await patchAppSpec(ns, "app", {
      operation: { id: "approve-1", type: "Approve", revision: c1, requestedBy: "e2e" },
    });
    await run(ns, minutes(11));
    const approved = (await getApp(ns, "app")).status;
    expect(approved).toMatchObject({ syncStatus: "Synced", healthStatus: "Healthy" });
    expect(ready(approved)).toMatchObject({
      status: "True",
      reason: "Synced",
      message: `revision ${c1} is applied and healthy`,
    });
  });
});

describe("a frozen App", () => {
  it("says so in Ready (reason Frozen, the revision that waits) and in kubectl get apps", async () => {
    const ns = "trial-frozen";
    const repo = await git.createRepo(ns, files());
    await createNamespace(ns);
    await createApp(ns, "app", { source: { git: { url: repo.url } } });
    const c1 = await repo.head();
    await run(ns);
    await patchAppSpec(ns, "app", { freeze: true });
    const c2 = await repo.commit({ "config.yaml": config("bonjour") });
    await run(ns, minutes(10), true);
    const frozen = (await getApp(ns, "app")).status;
    expect(frozen).toMatchObject({ revision: c1, syncStatus: "OutOfSync" });
    expect(ready(frozen)).toMatchObject({
      status: "True",
      reason: "Frozen",
      message: `frozen (spec.freeze): revision ${c2} is not applied (applied: ${c1}); all 2 objects healthy`,
    });
    const cm = await getObject(`/api/v1/namespaces/${ns}/configmaps/guestbook-config`);
    expect(cm?.["data"]).toEqual({ greeting: "hello" });
    // kubectl get apps: READY True, REASON Frozen (the CRD's printer columns).
    const row = kubectl(["get", "apps", "-n", ns, "--no-headers"]).trim().split(/\s+/);
    expect(row.slice(0, 5)).toEqual(["app", "True", "Frozen", "OutOfSync", "Healthy"]);

    // Unfrozen: the waiting revision is applied.
    await patchAppSpec(ns, "app", { freeze: false });
    await run(ns, minutes(11));
    const thawed = (await getApp(ns, "app")).status;
    expect(thawed).toMatchObject({ revision: c2, syncStatus: "Synced" });
    expect(ready(thawed)).toMatchObject({ reason: "Synced" });
  });
});

describe("the quick start's spec.source.app example (infra/examples/app-service.yaml)", () => {
  it("is applied without a registry: its digest-pinned images are used as they are", async () => {
    const ns = "trial-service";
    const file = resolve(import.meta.dirname, "../../infra/examples/app-service.yaml");
    const example = parse(readFileSync(file, "utf8")) as {
      spec: {
        source: { app: { services: Array<{ image: string; tag: string; digest: string }> } };
      };
    };
    const [web] = example.spec.source.app.services;
    await createNamespace(ns);
    expect((await createApp(ns, "app", example.spec)).status).toBe(201);
    // realPorts has no image port: a registry lookup would fail the run (SourceFailed).
    const line = await run(ns);
    expect(line).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced" });
    const status = (await getApp(ns, "app")).status;
    expect(status?.revision).toBe(`${web!.image}:${web!.tag}@${web!.digest}`);
    for (const name of ["web", "worker"]) {
      expect(await deploymentImage(ns, name)).toBe(`${web!.image}@${web!.digest}`);
    }
  });
});
