// Node server: the Hono app on @hono/node-server; triggers reconcile in this process.

import { serve as honoServe } from "@hono/node-server";
import { nameOf, Redactor } from "../src/core/index.ts";
import { createHttpApp, parseHttpConfig } from "../src/http/index.ts";
import { createSlackNotifier } from "../src/notify/index.ts";
import { hintFor, type RunOptions, reconcileMany, resolveSources } from "../src/reconcile/index.ts";
import type { RuntimeConfig } from "../src/runtime/config.ts";
import { nodePorts } from "./node-ports.ts";

/**
 * Serves the HTTP API on 127.0.0.1:`port` (PLUMB_HOST to change) until the process ends.
 * Triggered reconciles run in the background of this process, one at a time per App. They and
 * the HTTP app share `redactor`: what a run registers is redacted from logs and error answers.
 * @throws Error naming a missing or bad environment variable at start-up
 */
export async function serve(
  port: number,
  kubeconfig: string | undefined,
  config: RuntimeConfig,
  redactor: Redactor = new Redactor(),
): Promise<void> {
  const httpConfig = parseHttpConfig(process.env);
  const ports = nodePorts(kubeconfig, config, redactor);
  const running = new Set<string>();
  const again = new Set<string>();
  const log = (entry: Record<string, unknown>) =>
    console.error(JSON.stringify(redactor.redactValue(entry)));
  const reconcile = async (
    key: { namespace: string; name: string },
    options: RunOptions = {},
  ): Promise<void> => {
    const id = nameOf(key);
    if (running.has(id)) {
      again.add(id);
      return;
    }
    running.add(id);
    try {
      do {
        again.delete(id);
        await reconcileMany(
          [{ ...key, options }],
          ports,
          () => new Date(),
          (r) => console.log(JSON.stringify(redactor.redactValue(r))),
          1,
        );
      } while (again.has(id));
    } finally {
      running.delete(id);
    }
  };
  const app = createHttpApp({
    apps: ports().kube,
    config: httpConfig,
    now: () => new Date(),
    log,
    redactor,
    // Work after the response (Slack's 3-second limit): not awaited; failures logged.
    defer: (task) =>
      void task.catch((err) => log({ msg: "deferred task failed", error: String(err) })),
    slackRespond: createSlackNotifier().slack,
    async trigger(apps, reason) {
      log({ msg: "trigger", reason, apps: apps.map(nameOf) });
      // One lookup per Git source (issue 14), after the answer; each run gets its revision.
      void resolveSources(ports(), apps)
        .then((hints) => {
          for (const a of apps) {
            const key = { namespace: a.namespace, name: a.name };
            void reconcile(key, { source: hintFor(hints, a) }).catch((err) =>
              log({ msg: "reconcile failed", error: String(err) }),
            );
          }
        })
        .catch((err) => log({ msg: "trigger failed", error: String(err) }));
    },
  });
  const hostname = process.env["PLUMB_HOST"] ?? "127.0.0.1";
  await new Promise<void>((resolve) => {
    honoServe({ fetch: app.fetch, port, hostname }, (info) => {
      log({ msg: "listening", address: `http://${hostname}:${info.port}` });
      resolve();
    });
  });
}
