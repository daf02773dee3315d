// One redactor per run (issue 12, kind 6): status, Events, the run line and logs, also when the
// composition root passed no redactor; identity fields are never rewritten.
import { describe, expect, it } from "vitest";
import { addApp, createFakeKube } from "../../test/support/fake-kube.ts";
import type { AppStatus } from "../app/index.ts";
import { Redactor, SourceError } from "../core/index.ts";
import type { Ports } from "./index.ts";
import { reconcileApp } from "./index.ts";
import { redactStatus } from "./redaction.ts";

const TOKEN = "glpat-9x/Q+z=Kp7mW2v";
const BASIC = Buffer.from(`deploy:${TOKEN}`).toString("base64");

describe("a run redacts what it writes with one redactor", () => {
  it("a source error echoing the Basic header: status, Events, line and logs carry [redacted]", async () => {
    const kube = createFakeKube();
    kube.secrets.set("team-a/git", { username: "deploy", token: TOKEN });
    addApp(kube, "team-a", "web", {
      source: { git: { url: "https://git.example/org/repo.git", secretRef: { name: "git" } } },
    });
    const logs: unknown[] = [];
    const ports: Ports = {
      kube,
      git: {
        async resolve() {
          throw new SourceError(`ERR access denied (you sent Basic ${BASIC})`, true);
        },
        async fetch() {
          return [];
        },
      },
      holder: "test",
      log: (e) => logs.push(e),
    };
    const r = await reconcileApp({ namespace: "team-a", name: "web" }, ports, new Date());
    expect(r.error).toBe("SourceFailed: ERR access denied (you sent Basic [redacted])");
    const status = kube.apps.get("team-a/web")!.status!;
    expect(status.conditions?.find((c) => c.type === "Ready")?.message).toBe(
      "ERR access denied (you sent Basic [redacted])",
    );
    expect(kube.events).toEqual([
      { reason: "SourceFailed", message: "ERR access denied (you sent Basic [redacted])" },
    ]);
    expect(JSON.stringify([r, status, kube.events, logs])).not.toContain(BASIC);
  });
});

describe("redactStatus", () => {
  it("redacts text but never the inventory, resource refs, revisions or hashes", () => {
    const secret = "web-config-abc"; // a Secret value that is also an object's name
    const redactor = new Redactor([secret]);
    const ref = { apiVersion: "v1", kind: "ConfigMap", name: secret, namespace: "team-a" };
    const status: AppStatus = {
      revision: "a".repeat(40),
      objectHash: "h1",
      inventory: [ref],
      resources: [{ ...ref, status: "Failed", message: `value ${secret} refused` }],
      drift: [{ ...ref, fields: [{ path: "data.k", desired: secret, live: "other" }] }],
      healthReason: `ConfigMap ${secret} missing`,
    };
    const shown = redactStatus(status, redactor);
    expect(shown.inventory).toEqual([ref]);
    expect(shown.resources).toEqual([
      { ...ref, status: "Failed", message: "value [redacted] refused" },
    ]);
    expect(shown.drift).toEqual([
      { ...ref, fields: [{ path: "data.k", desired: "[redacted]", live: "other" }] },
    ]);
    expect(shown.healthReason).toBe("ConfigMap [redacted] missing");
    expect(shown.revision).toBe("a".repeat(40));
    // The input is left alone.
    expect(status.healthReason).toBe(`ConfigMap ${secret} missing`);
  });
});
