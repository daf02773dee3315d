// Measurement 3: signed GitHub push sent → new image in the live Deployment.
import { githubHeaders, githubPush } from "../test/support/github.ts";
import { guestbook } from "./fixtures.ts";
import type { BenchGit } from "./git.ts";
import { type Kube, sleep, waitFor } from "./kube.ts";
import { WEBHOOK_SECRET } from "./servers.ts";
import { type Summary, summarize } from "./stats.ts";

export interface WebhookResult {
  runtime: string;
  pushes: number;
  /** Push sent → image live, ms. */
  latencyMs: Summary;
  /** Push sent → 202 received, ms. */
  ackMs: Summary;
  /** The warm-up push (first delivery to a fresh server), not in the figures above. */
  warmupMs: number[];
  samples: number[];
  errors: string[];
}

const POLL_MS = 10;
const APPLY_TIMEOUT_MS = 30_000;

/**
 * Sets up guestbook (repo `repoName`, App `ns`/guestbook, first sync done through `firstSync`),
 * then sends `warmups` + `pushes` signed pushes to `base`, each after a new commit changing the
 * image; times each until the Deployment shows the new image (polled every ~10 ms).
 */
export async function webhookLatency(opts: {
  runtime: string;
  base: string;
  kube: Kube;
  git: BenchGit;
  ns: string;
  repoName: string;
  pushes: number;
  warmups: number;
  firstSync: (ref: { namespace: string; name: string }) => Promise<void>;
}): Promise<WebhookResult> {
  const { kube, git, ns } = opts;
  const repo = await git.createRepo(opts.repoName, guestbook.files());
  await kube.namespace(ns);
  await kube.createApp(ns, "guestbook", {
    source: { git: { url: repo.url, ref: "main" } },
    interval: "1h",
  });
  await opts.firstSync({ namespace: ns, name: "guestbook" });
  const samples: number[] = [];
  const acks: number[] = [];
  const warmupMs: number[] = [];
  const errors: string[] = [];
  for (let k = 0; k < opts.warmups + opts.pushes; k++) {
    const tag = `hook-${k}`;
    const want = guestbook.imageFor(tag);
    const sha = await git.commit(repo.name, guestbook.bump(tag));
    const body = githubPush(repo.url, "refs/heads/main", sha);
    const headers = githubHeaders(body, WEBHOOK_SECRET);
    const t0 = performance.now();
    const ack = fetch(`${opts.base}/webhooks/github`, { method: "POST", headers, body }).then(
      async (res) => {
        const t = performance.now() - t0;
        if (res.status !== 202) throw new Error(`webhook: HTTP ${res.status} ${await res.text()}`);
        await res.body?.cancel().catch(() => undefined);
        return t;
      },
    );
    let latency: number | undefined;
    let ackError: unknown;
    ack.catch((err) => {
      ackError = err;
    });
    while (performance.now() - t0 < APPLY_TIMEOUT_MS && ackError === undefined) {
      if ((await kube.deploymentImage(ns, guestbook.deployment)) === want) {
        latency = performance.now() - t0;
        break;
      }
      await sleep(POLL_MS);
    }
    if (ackError !== undefined || latency === undefined) {
      errors.push(
        ackError !== undefined
          ? String(ackError)
          : `push ${k}: image not live after ${APPLY_TIMEOUT_MS} ms`,
      );
      continue;
    }
    const ackMs = await ack;
    if (k < opts.warmups) warmupMs.push(latency);
    else {
      samples.push(latency);
      acks.push(ackMs);
    }
    // Let the run finish (status written) before the next push, so runs do not overlap.
    await waitFor(
      "status at the pushed revision",
      async () => (await kube.getApp(ns, "guestbook")).status?.revision === sha,
      { everyMs: 25 },
    ).catch((err) => errors.push(String(err)));
    await sleep(200);
  }
  return {
    runtime: opts.runtime,
    pushes: samples.length,
    latencyMs: summarize(samples),
    ackMs: summarize(acks),
    warmupMs,
    samples: samples.map((x) => Math.round(x * 10) / 10),
    errors,
  };
}
