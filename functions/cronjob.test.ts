// infra/cronjob/plumb-reconcile.yaml runs what the CLI accepts, with one shard per index.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { parseCliArgs } from "./cli-args.ts";

const MANIFEST = join(import.meta.dirname, "../infra/cronjob/plumb-reconcile.yaml");

interface CronJob {
  spec: {
    schedule: string;
    jobTemplate: {
      spec: {
        completionMode: string;
        completions: number;
        parallelism: number;
        template: {
          spec: {
            containers: Array<{
              args: string[];
              env: Array<{ name: string; value?: string; valueFrom?: unknown }>;
            }>;
          };
        };
      };
    };
  };
}

describe("the CronJob of infra/cronjob", () => {
  const cron = parse(readFileSync(MANIFEST, "utf8")) as CronJob;
  const job = cron.spec.jobTemplate.spec;
  const container = job.template.spec.containers[0]!;
  const shards = Number(container.env.find((e) => e.name === "SHARDS")?.value);

  it("is an Indexed Job of one pod per shard", () => {
    expect(job.completionMode).toBe("Indexed");
    expect(job.completions).toBe(shards);
    expect(job.parallelism).toBe(shards);
    expect(container.env.find((e) => e.name === "SHARD")?.valueFrom).toEqual({
      fieldRef: {
        fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
      },
    });
  });

  it("each pod's arguments, once Kubernetes expands them, are a valid tick of its shard", () => {
    for (let index = 0; index < shards; index++) {
      const args = container.args.map((a) =>
        a.replace("$(SHARD)", String(index)).replace("$(SHARDS)", String(shards)),
      );
      expect(parseCliArgs(args)).toMatchObject({
        kind: "reconcile-all",
        everyMs: 60_000,
        shard: { index, count: shards },
      });
    }
  });

  it("ticks as often as --every says", () => {
    expect(cron.spec.schedule).toBe("* * * * *");
    expect(container.args[container.args.indexOf("--every") + 1]).toBe("1m");
  });
});
