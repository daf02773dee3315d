// HTTP error answers are redacted with the process's Redactor.
import { describe, expect, it } from "vitest";
import { FakeKube, testApp } from "../../test/support/fake-kube.ts";
import { KubeApiError, REDACTED, Redactor } from "../core/index.ts";
import { createHttpApp } from "./app.ts";

describe("HTTP error answers are redacted", () => {
  it("an API server conflict message echoing a Secret value", async () => {
    const kube = new FakeKube([testApp("team-a", "web")]);
    const redactor = new Redactor(["s3cr3t-from-git"]);
    const app = createHttpApp({
      apps: kube,
      config: { apiTokens: [{ name: "ci", token: "ci-token-123456" }] },
      trigger: kube.trigger,
      now: () => new Date(),
      redactor,
    });
    kube.fail.setOperation = new KubeApiError(
      409,
      "Conflict",
      'Operation cannot be fulfilled: value "s3cr3t-from-git" changed',
    );
    const res = await app.request("/api/v1/namespaces/team-a/apps/web/operations", {
      method: "POST",
      headers: { authorization: "Bearer ci-token-123456", "content-type": "application/json" },
      body: JSON.stringify({ type: "sync" }),
    });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({
      message: `Operation cannot be fulfilled: value "${REDACTED}" changed`,
      reason: "Conflict",
    });
  });
});
