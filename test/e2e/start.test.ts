// `npm start` as a new user runs it, with no KUBECONFIG: a local control plane of its own, the
// example Apps Healthy, and the example's Git server still serving after npm start exits, so a
// change pushed to it is synced by the next `plumb reconcile`. `npm run cluster:stop` stops both.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const state = mkdtempSync(join(tmpdir(), "plumb-start-"));
const kubeconfig = join(state, "cluster/kubeconfig");
const clusterBin = process.env["PLUMB_CLUSTER_BIN"] ?? join(ROOT, "test/cluster/bin/plumb-cluster");

/**
 * The environment of a user's shell: no KUBECONFIG, none of the test cluster's settings (a
 * PLUMB_CLUSTER_NODE=kubelet run would give npm start a real kubelet, which no example image
 * can reach a registry from), the state kept in `state`; the prebuilt cluster binary is kept.
 */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PLUMB_START_DIR: state };
  delete env["KUBECONFIG"];
  for (const key of Object.keys(env)) {
    if (key.startsWith("PLUMB_CLUSTER_") && key !== "PLUMB_CLUSTER_BIN") delete env[key];
  }
  return env;
}

/** `npm run cluster:stop`'s two steps for `state`. */
async function stopAll(): Promise<void> {
  await run(process.execPath, [join(ROOT, "scripts/example-git.ts"), "stop", join(state, "git")]);
  await run("bash", [join(ROOT, "test/cluster/cluster.sh"), "stop", join(state, "cluster")]);
}

afterAll(async () => {
  await stopAll().catch(() => {});
  rmSync(state, { recursive: true, force: true });
});

const kubectl = (...args: string[]) =>
  execFileSync(clusterBin, ["kubectl", ...args, "--kubeconfig", kubeconfig], { encoding: "utf8" });

describe("npm start without a cluster", () => {
  it("leaves the example's Git server serving, so a pushed change syncs after it exits", async () => {
    const start = await run(process.execPath, [join(ROOT, "scripts/start.ts")], {
      env: userEnv(),
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { code: number; stdout: string; stderr: string }) => err);
    expect("code" in start ? start.code : 0, start.stderr).toBe(0);
    expect(start.stderr).toContain(
      "The example Apps guestbook/guestbook and shop/shop are Synced and Healthy.",
    );
    const server = JSON.parse(readFileSync(join(state, "git/server.json"), "utf8")) as {
      url: string;
    };
    const repoUrl = `${server.url}/apps.git`;
    expect(start.stderr).toContain(`git clone ${repoUrl}`);

    // npm start has exited: the server still answers a clone and takes a push.
    const work = join(state, "clone");
    await run("git", ["clone", "--quiet", repoUrl, work]);
    writeFileSync(
      join(work, "guestbook/greeting.yaml"),
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: greeting\ndata:\n  text: pushed\n",
    );
    const gitEnv = {
      ...process.env,
      GIT_AUTHOR_NAME: "user",
      GIT_AUTHOR_EMAIL: "user@example.com",
      GIT_COMMITTER_NAME: "user",
      GIT_COMMITTER_EMAIL: "user@example.com",
    };
    await run("git", ["-C", work, "add", "--all"], { env: gitEnv });
    await run("git", ["-C", work, "commit", "--quiet", "-m", "add a ConfigMap"], { env: gitEnv });
    await run("git", ["-C", work, "push", "--quiet", "origin", "HEAD:main"], { env: gitEnv });
    const pushed = (await run("git", ["-C", work, "rev-parse", "HEAD"])).stdout.trim();

    await run(
      process.execPath,
      [
        join(ROOT, "functions/plumb.mjs"),
        "reconcile",
        "guestbook/guestbook",
        "--kubeconfig",
        kubeconfig,
      ],
      { env: userEnv() },
    );
    expect(
      kubectl("get", "configmap", "greeting", "-n", "guestbook", "-o", "jsonpath={.data.text}"),
    ).toBe("pushed");
    expect(
      kubectl(
        "get",
        "apps.plumb.dev",
        "guestbook",
        "-n",
        "guestbook",
        "-o",
        "jsonpath={.status.revision}",
      ),
    ).toBe(pushed);

    // cluster:stop stops the Git server too.
    await stopAll();
    expect(existsSync(join(state, "git/server.json"))).toBe(false);
    const after = await fetch(`${repoUrl}/info/refs?service=git-upload-pack`).then(
      (r) => r.status,
      () => "refused",
    );
    expect(after).toBe("refused");
  });
});
