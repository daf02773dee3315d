// plumb's health rules against its peers' own test data: every case of Argo CD's
// gitops-engine health suite, Argo CD's health scripts for the kinds plumb has a rule for, and
// kstatus' status tests, each with the peer's verdict and plumb's. Where they differ, the row
// says why (the rules' docstrings and README.md in this folder say the same).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import type { KubeObject } from "../core/index.ts";
import { documentToJson, KUBECTL_YAML_OPTIONS } from "../render/kubectl-yaml.ts";
import { assessHealth } from "./index.ts";

const TESTDATA = path.join(import.meta.dirname, "testdata");
const NOW = new Date("2026-06-01T12:00:00Z");

/** A test file read as kubectl (and Argo CD, through sigs.k8s.io/yaml) reads it. */
function load(file: string): KubeObject {
  const [doc] = parseAllDocuments(readFileSync(file, "utf8"), KUBECTL_YAML_OPTIONS);
  if (!doc || Array.isArray(doc)) throw new Error(`${file}: no document`);
  return documentToJson(doc as Parameters<typeof documentToJson>[0]) as KubeObject;
}

/**
 * gitops-engine pkg/health/health_test.go: [file, Argo CD's status, plumb's if different, why].
 * "none" is Argo CD's nil: a kind it has no rule for.
 */
const GITOPS_ENGINE: ReadonlyArray<readonly [string, string, string?, string?]> = [
  ["nginx.yaml", "Healthy"],
  ["deployment-progressing.yaml", "Progressing"],
  ["deployment-suspended.yaml", "Suspended"],
  ["deployment-degraded.yaml", "Degraded"],
  ["statefulset.yaml", "Healthy"],
  ["statefulset-ondelete.yaml", "Healthy"],
  ["daemonset-ondelete.yaml", "Healthy"],
  ["pvc-bound.yaml", "Healthy"],
  ["pvc-pending.yaml", "Progressing"],
  ["svc-clusterip.yaml", "Healthy"],
  ["svc-loadbalancer.yaml", "Healthy"],
  ["svc-loadbalancer-unassigned.yaml", "Progressing"],
  ["svc-loadbalancer-nonemptylist.yaml", "Healthy"],
  ["ingress.yaml", "Healthy"],
  [
    "ingress-unassigned.yaml",
    "Progressing",
    "Healthy",
    "many ingress controllers never publish an address (kstatus: Current)",
  ],
  ["ingress-nonemptylist.yaml", "Healthy"],
  ["knative-service.yaml", "none", "Healthy", "the generic rule: Ready=True"],
  ["job-running.yaml", "Progressing"],
  ["job-failed.yaml", "Degraded"],
  ["job-succeeded.yaml", "Healthy"],
  ["job-suspended.yaml", "Suspended"],
  ["hpa-v2-healthy.yaml", "Healthy"],
  ["hpa-v2-degraded.yaml", "Degraded"],
  ["hpa-v2-progressing.yaml", "Progressing"],
  ["hpa-v2beta2-healthy.yaml", "Healthy"],
  ["hpa-v2beta1-healthy-disabled.yaml", "Healthy"],
  ["hpa-v2beta1-healthy.yaml", "Healthy"],
  ["hpa-v1-degraded.yaml", "Degraded"],
  ["hpa-v1-healthy.yaml", "Healthy"],
  ["hpa-v1-healthy-toofew.yaml", "Healthy"],
  ["hpa-v1-progressing.yaml", "Progressing"],
  ["hpa-v1-progressing-with-no-annotations.yaml", "Progressing"],
  ["pod-pending.yaml", "Progressing"],
  ["pod-running-not-ready.yaml", "Progressing"],
  ["pod-crashloop.yaml", "Degraded"],
  ["pod-imagepullbackoff.yaml", "Degraded"],
  ["pod-error.yaml", "Degraded"],
  ["pod-running-restart-always.yaml", "Healthy"],
  ["pod-running-restart-never.yaml", "Progressing"],
  [
    "pod-running-restart-onfailure.yaml",
    "Progressing",
    "Degraded",
    "CrashLoopBackOff is a failure whatever the restartPolicy (kstatus: Failed); Argo spares its hook pods",
  ],
  ["pod-failed.yaml", "Degraded"],
  ["pod-succeeded.yaml", "Healthy"],
  ["pod-deletion.yaml", "Progressing"],
  ["application-healthy.yaml", "none", "Healthy", "no metadata, no conditions: the generic rule"],
  ["application-degraded.yaml", "none", "Healthy", "no metadata, no conditions: the generic rule"],
  ["apiservice-v1-true.yaml", "Healthy"],
  ["apiservice-v1-false.yaml", "Progressing"],
  ["apiservice-v1beta1-true.yaml", "Healthy"],
  ["apiservice-v1beta1-false.yaml", "Progressing"],
];

describe("Argo CD gitops-engine health suite", () => {
  it("covers every file of its testdata", () => {
    const files = readdirSync(path.join(TESTDATA, "argo-cd/gitops-engine")).sort();
    expect(GITOPS_ENGINE.map(([f]) => f).sort()).toEqual(files);
  });

  const rows = GITOPS_ENGINE.map(([file, argo, plumb]) => ({ file, argo, plumb: plumb ?? argo }));
  it.each(rows)("$file: Argo $argo, plumb $plumb", ({ file, plumb }) => {
    const obj = load(path.join(TESTDATA, "argo-cd/gitops-engine", file));
    expect(assessHealth(obj, NOW).status).toBe(plumb);
  });
});

/** Cases of Argo CD's health scripts where plumb's verdict differs on purpose, and why. */
const SCRIPT_DIFFERENCES: Readonly<Record<string, readonly [string, string]>> = {
  "batch/CronJob/testdata/suspended.yaml": [
    "Suspended",
    "Argo reports Healthy only to work around its own sync bug with suspended CronJobs",
  ],
};

const SCRIPTS = path.join(TESTDATA, "argo-cd/resource_customizations");
const scriptCases = readdirSync(SCRIPTS, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith("health_test.yaml"))
  .sort()
  .flatMap((f) => {
    const dir = path.dirname(f);
    const spec = load(path.join(SCRIPTS, f)) as unknown as {
      tests: Array<{ inputPath: string; healthStatus: { status: string } }>;
    };
    return spec.tests.map((t) => {
      const input = path.join(dir, t.inputPath);
      const diff = SCRIPT_DIFFERENCES[input];
      return [input, t.healthStatus.status, diff?.[0], diff?.[1]] as const;
    });
  });

describe("Argo CD resource_customizations health scripts (kinds plumb has a rule for)", () => {
  it("has cases for every kind copied", () => {
    expect(new Set(scriptCases.map(([f]) => f.split("/testdata/")[0])).size).toBe(8);
  });

  const rows = scriptCases.map(([input, argo, plumb]) => ({ input, argo, plumb: plumb ?? argo }));
  it.each(rows)("$input: Argo $argo, plumb $plumb", ({ input, plumb }) => {
    expect(assessHealth(load(path.join(SCRIPTS, input)), NOW).status).toBe(plumb);
  });
});

/**
 * kstatus status_compute_test.go: [case, file, kstatus' status, plumb's, why they differ].
 * kstatus Current is Healthy, InProgress Progressing, Failed Degraded.
 */
const KSTATUS: ReadonlyArray<readonly [string, string, string, string, string?]> = [
  ["podNoStatus", "podNoStatus.yaml", "InProgress", "Progressing"],
  ["podReady", "podReady.yaml", "Current", "Healthy"],
  ["podCompletedSuccessfully", "podCompletedOK.yaml", "Current", "Healthy"],
  [
    "podCompletedFailed",
    "podCompletedFail.yaml",
    "Current",
    "Degraded",
    "a failed pod is a failure (Argo: Degraded); kstatus calls any completed pod Current",
  ],
  [
    "podUnschedulable",
    "podUnschedulable.yaml",
    "Failed",
    "Progressing",
    "cluster autoscalers routinely resolve it (Argo: Progressing); kstatus: Failed after 15 s",
  ],
  ["podCrashLooping", "podCrashLooping.yaml", "Failed", "Degraded"],
  ["pvcNoStatus", "pvcNoStatus.yaml", "InProgress", "Progressing"],
  ["pvcBound", "pvcBound.yaml", "Current", "Healthy"],
  ["stsNoStatus", "stsNoStatus.yaml", "InProgress", "Progressing"],
  ["stsBadStatus", "stsBadStatus.yaml", "InProgress", "Progressing"],
  ["stsOK", "stsOK.yaml", "Current", "Healthy"],
  ["stsLessReady", "stsLessReady.yaml", "InProgress", "Progressing"],
  ["stsLessCurrent", "stsLessCurrent.yaml", "InProgress", "Progressing"],
  ["stsExtraPods", "stsExtraPods.yaml", "InProgress", "Progressing"],
  ["dsNoStatus", "dsNoStatus.yaml", "InProgress", "Progressing"],
  ["dsBadStatus", "dsBadStatus.yaml", "InProgress", "Progressing"],
  ["dsOK", "dsOK.yaml", "Current", "Healthy"],
  ["dsLessReady", "dsLessReady.yaml", "InProgress", "Progressing"],
  ["dsDifferentGeneration", "dsDifferentGeneration.yaml", "InProgress", "Progressing"],
  ["dsLessAvailable", "dsLessAvailable.yaml", "InProgress", "Progressing"],
  ["depNoStatus", "depNoStatus.yaml", "InProgress", "Progressing"],
  ["depOK", "depOK.yaml", "Current", "Healthy"],
  ["depNotProgressing", "depNotProgressing.yaml", "InProgress", "Progressing"],
  ["depNoProgressDeadlineSeconds", "depNoProgressDeadlineSeconds.yaml", "Current", "Healthy"],
  ["depNotAvailable", "depNotAvailable.yaml", "InProgress", "Progressing"],
  ["rsNoStatus", "rsNoStatus.yaml", "InProgress", "Progressing"],
  ["rsOK1", "rsOK1.yaml", "Current", "Healthy"],
  ["rsOK2", "rsOK2.yaml", "Current", "Healthy"],
  ["rsLessAvailable", "rsLessAvailable.yaml", "InProgress", "Progressing"],
  ["rsLessReady", "rsLessReady.yaml", "InProgress", "Progressing"],
  [
    "rsReplicaFailure",
    "rsReplicaFailure.yaml",
    "InProgress",
    "Degraded",
    "pods cannot be created, e.g. over quota (Argo: Degraded); kstatus: InProgress",
  ],
  ["pdbNotObserved", "pdbNotObserved.yaml", "InProgress", "Progressing"],
  ["pdbObserved", "pdbObserved.yaml", "Current", "Healthy"],
  ["crdNoStatus", "crdNoStatus.yaml", "Current", "Healthy"],
  ["crdReady", "crdReady.yaml", "Current", "Healthy"],
  ["crdNotReady", "crdNotReady.yaml", "InProgress", "Progressing"],
  ["crdNoCondition", "crdNoCondition.yaml", "Current", "Healthy"],
  ["crdMismatchStatusGeneration", "crdMismatchStatusGeneration.yaml", "InProgress", "Progressing"],
  ["jobNoStatus", "jobNoStatus.yaml", "InProgress", "Progressing"],
  ["jobComplete", "jobComplete.yaml", "Current", "Healthy"],
  ["jobFailed", "jobFailed.yaml", "Failed", "Degraded"],
  [
    "jobInProgress",
    "jobInProgress.yaml",
    "Current",
    "Progressing",
    "a running Job has not succeeded yet (Argo: Progressing); kstatus: Current once started",
  ],
  ["cronjobNoStatus", "cronjobNoStatus.yaml", "Current", "Healthy"],
  ["cronjobWithStatus", "cronjobWithStatus.yaml", "Current", "Healthy"],
  ["serviceDefault", "serviceDefault.yaml", "Current", "Healthy"],
  ["serviceNodePort", "serviceNodePort.yaml", "Current", "Healthy"],
  ["serviceLBnok", "serviceLBnok.yaml", "InProgress", "Progressing"],
  [
    "serviceLBok",
    "serviceLBok.yaml",
    "Current",
    "Progressing",
    "no load balancer address yet (Argo: Progressing); kstatus only waits for a clusterIP",
  ],
  ["crdNoConditions", "crdNoConditions.yaml", "InProgress", "Progressing"],
  ["crdInstalling", "crdInstalling.yaml", "InProgress", "Progressing"],
  ["crdNamesNotAccepted", "crdNamesNotAccepted.yaml", "Failed", "Degraded"],
  ["crdEstablished", "crdEstablished.yaml", "Current", "Healthy"],
];

describe("kstatus status suite", () => {
  it("covers every file copied", () => {
    const files = readdirSync(path.join(TESTDATA, "kstatus")).sort();
    expect([...new Set(KSTATUS.map(([, f]) => f))].sort()).toEqual(files);
  });

  const rows = KSTATUS.map(([name, file, kstatus, plumb]) => ({ name, file, kstatus, plumb }));
  it.each(rows)("$name ($file): kstatus $kstatus, plumb $plumb", ({ file, plumb }) => {
    expect(assessHealth(load(path.join(TESTDATA, "kstatus", file)), NOW).status).toBe(plumb);
  });
});
