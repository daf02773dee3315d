// test/cluster/cluster.sh start on a slow machine: each component starts once the one it talks
// to is ready. An API server that answers nothing for 15 s (SIGSTOP: what a loaded machine
// looks like to its clients) outlasts kube-controller-manager's own 10 s wait for /healthz, so a
// controller manager started beside it exits; started after /readyz, it never sees it slow.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sleep, waitFor } from "../support/wait.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const CLUSTER_SH = join(ROOT, "test/cluster/cluster.sh");
const dir = mkdtempSync(join(tmpdir(), "plumb-slow-start-"));

/** Runs `cluster.sh VERB dir`; resolves with its exit code and everything it printed. */
function cluster(verb: "start" | "stop"): { done: Promise<{ code: number | null; out: string }> } {
  const child = spawn("bash", [CLUSTER_SH, verb, dir], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  return {
    done: new Promise((done) => child.on("close", (code) => done({ code, out }))),
  };
}

afterAll(async () => {
  await cluster("stop").done;
  rmSync(dir, { recursive: true, force: true });
});

describe("cluster.sh start", () => {
  it("waits for a frozen API server before it starts kube-controller-manager, and is ready", async () => {
    const start = cluster("start");
    const pidFile = join(dir, "kube-apiserver.pid");
    const apiserver = await waitFor(
      "the API server's pid file",
      async () => {
        const text = existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim() : "";
        return /^\d+$/.test(text) ? Number(text) : undefined;
      },
      { everyMs: 20 },
    );
    process.kill(apiserver, "SIGSTOP");
    try {
      await sleep(15_000);
      // Frozen all along: nothing after the API server has been started.
      expect(existsSync(join(dir, "kube-controller-manager.pid"))).toBe(false);
      expect(existsSync(join(dir, "kubelet-sim.pid"))).toBe(false);
    } finally {
      process.kill(apiserver, "SIGCONT");
    }
    const { code, out } = await start.done;
    expect(code, out).toBe(0);
    const order = [
      "cluster.sh: etcd healthy",
      "cluster.sh: kube-apiserver /readyz",
      "cluster.sh: kube-controller-manager working",
      "cluster.sh: node plumb-node Ready",
      "cluster.sh: cluster ready in",
    ].map((line) => out.indexOf(line));
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(out).not.toContain("start failed");
  });
});
