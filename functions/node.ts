// Node server: the Hono app on @hono/node-server; triggers reconcile in this process.

import { serve as honoServe } from "@hono/node-server";
import { nameOf, Redactor } from "../src/core/index.ts";
import {
  configWarnings,
  createHttpApp,
  DEFAULT_NAMESPACE,
  parseHttpConfig,
} from "../src/http/index.ts";
import { jsonPoster } from "../src/notify/index.ts";
import { hintFor, resolveSources } from "../src/reconcile/index.ts";
import type { RuntimeConfig } from "../src/runtime/config.ts";
import { nodePorts } from "./node-ports.ts";
import { createRunner } from "./node-runs.ts";
import { forgePreviewer } from "./previews.ts";

/**
 * Serves the HTTP API on 127.0.0.1:`port` (PLUMB_HOST to change) until the process ends.
 * Triggered reconciles run in the background of this process, one at a time per App; a run
 * whose objects are still Progressing gets its follow-up run by timer, and with
 * `options.scheduleEveryMs` the process also runs the schedule (functions/node-runs.ts). They and
 * the HTTP app share `redactor`: what a run registers is redacted from logs and error answers.
 * @throws Error naming a missing or bad environment variable at start-up
 */
export async function serve(
  port: number,
  kubeconfig: string | undefined,
  config: RuntimeConfig,
  redactor: Redactor = new Redactor(),
  options: { scheduleEveryMs?: number } = {},
): Promise<void> {
  const httpConfig = parseHttpConfig(process.env);
  const ports = nodePorts(kubeconfig, config, redactor);
  const log = (entry: Record<string, unknown>) =>
    console.error(JSON.stringify(redactor.redactValue(entry)));
  const print = (r: object) => console.log(JSON.stringify(redactor.redactValue(r)));
  const runner = createRunner(ports, print, log, config.concurrency);
  // Said at start (and by /healthz): no API tokens, no webhook secret.
  for (const warning of configWarnings(httpConfig)) log({ level: "warning", msg: warning });
  const app = createHttpApp({
    apps: ports().kube,
    config: httpConfig,
    now: () => new Date(),
    log,
    redactor,
    // Work after the response (Slack's 3-second limit): not awaited; failures logged.
    defer: (task) =>
      void task.catch((err) => log({ msg: "deferred task failed", error: String(err) })),
    slackRespond: jsonPoster(),
    previewPullRequest: forgePreviewer(ports, httpConfig.namespace ?? DEFAULT_NAMESPACE, log),
    async trigger(apps, reason) {
      log({ msg: "trigger", reason, apps: apps.map(nameOf) });
      // One lookup per Git source, after the answer; each run gets its revision.
      void resolveSources(ports(), apps)
        .then((hints) => {
          for (const a of apps) {
            const key = { namespace: a.namespace, name: a.name };
            void runner.reconcile(key, { source: hintFor(hints, a) });
          }
        })
        .catch((err) => log({ msg: "trigger failed", error: String(err) }));
    },
  });
  // With --schedule this process is also the scheduler (the Worker's cron, a CronJob's
  // reconcile --all): due Apps, deleted ones among them, are reconciled every tick.
  if (options.scheduleEveryMs) runner.startSchedule(options.scheduleEveryMs);
  const hostname = process.env["PLUMB_HOST"] ?? "127.0.0.1";
  await new Promise<void>((resolve) => {
    honoServe({ fetch: app.fetch, port, hostname }, (info) => {
      log({
        msg: "listening",
        address: `http://${hostname}:${info.port}`,
        schedule: options.scheduleEveryMs ? `every ${options.scheduleEveryMs / 1000}s` : "off",
      });
      resolve();
    });
  });
}
