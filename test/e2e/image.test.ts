// An image source: a tag in a real (local) OCI registry, pinned to its digest and rolled out.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileApp } from "../../src/reconcile/index.ts";
import { createImagePort } from "../../src/source/image.ts";
import { startRegistry, type TestRegistry } from "../support/registry.ts";
import { createApp, createNamespace, getApp, getObject, realPorts } from "./support.ts";

let registry: TestRegistry;
beforeAll(async () => {
  registry = await startRegistry({ auth: "bearer" });
});
afterAll(async () => {
  await registry?.stop();
});

const manifest = (layer: string) => ({
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {
    mediaType: "application/vnd.oci.image.config.v1+json",
    digest: `sha256:${"c".repeat(64)}`,
    size: 2,
  },
  layers: [
    {
      mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
      digest: `sha256:${layer.repeat(64)}`,
      size: 1,
    },
  ],
});

describe("image source", () => {
  it("renders a Deployment and Service pinned to the tag's digest, and rolls when the tag moves", async () => {
    const first = registry.push("org/web", "1.4", manifest("a"));
    await createNamespace("image");
    const created = await createApp("image", "web", {
      source: {
        image: {
          repository: `${registry.host}/org/web`,
          tag: "1.4",
          port: 9898,
          replicas: 2,
          env: { B: "2", A: "1" },
          healthCheck: { path: "/healthz" },
        },
      },
    });
    expect(created.status).toBe(201);
    const ports = () => realPorts({ image: createImagePort() });
    const r1 = await reconcileApp({ namespace: "image", name: "web" }, ports(), new Date());
    expect(r1).toMatchObject({ outcome: "Reconciled", syncStatus: "Synced", revision: first });
    const deploy = await getObject("/apis/apps/v1/namespaces/image/deployments/web");
    const container = (
      deploy!["spec"] as { template: { spec: { containers: Array<Record<string, unknown>> } } }
    ).template.spec.containers[0];
    expect(container).toMatchObject({
      image: `${registry.host}/org/web@${first}`,
      ports: [{ name: "http", containerPort: 9898, protocol: "TCP" }],
      env: [
        { name: "A", value: "1" },
        { name: "B", value: "2" },
      ],
      readinessProbe: { httpGet: { path: "/healthz", port: "http" } },
    });
    expect(await getObject("/api/v1/namespaces/image/services/web")).toBeDefined();

    const second = registry.push("org/web", "1.4", manifest("b"));
    const r2 = await reconcileApp({ namespace: "image", name: "web" }, ports(), new Date());
    expect(r2.revision).toBe(second);
    const status = (await getApp("image", "web")).status;
    expect(status?.previousRevisions?.[0]?.revision).toBe(first);
  });

  it("an unknown tag is a SourceFailed condition naming the image", async () => {
    await createNamespace("image-missing");
    await createApp("image-missing", "web", {
      source: { image: { repository: `${registry.host}/org/none`, tag: "9.9" } },
    });
    const r = await reconcileApp(
      { namespace: "image-missing", name: "web" },
      realPorts({ image: createImagePort() }),
      new Date(),
    );
    expect(r.error).toBe(`SourceFailed: image ${registry.host}/org/none:9.9 not found`);
  });
});
