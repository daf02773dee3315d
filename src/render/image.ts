// Image source: one container image rendered to a Deployment, a Service and an optional Ingress.
import type { ImageSource } from "../app/index.ts";
import type { KubeObject } from "../core/index.ts";
import type { ParsedObject } from "./manifests.ts";

/**
 * Renders an image source, pinned to `digest` ("sha256:…"), as parsed objects named after the
 * App. The origin of each is "spec.source.image". Env entries are sorted by name so the
 * rendered set (and so status.objectHash) is stable.
 */
export function renderImage(name: string, src: ImageSource, digest: string): ParsedObject[] {
  const labels = { "app.kubernetes.io/name": name };
  const container: Record<string, unknown> = {
    name,
    image: `${src.repository}@${digest}`,
    ports: [{ name: "http", containerPort: src.port, protocol: "TCP" }],
  };
  const env = Object.entries(src.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (env.length > 0) container["env"] = env.map(([k, v]) => ({ name: k, value: v }));
  if (src.healthCheck) {
    container["readinessProbe"] = { httpGet: { path: src.healthCheck.path, port: "http" } };
  }
  const objects: KubeObject[] = [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, labels, annotations: { "plumb.dev/image-tag": src.tag } },
      spec: {
        replicas: src.replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [container] } },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, labels },
      spec: { selector: labels, ports: [{ name: "http", port: 80, targetPort: "http" }] },
    },
  ];
  if (src.domain) {
    objects.push({
      apiVersion: "networking.k8s.io/v1",
      kind: "Ingress",
      metadata: { name, labels },
      spec: {
        rules: [
          {
            host: src.domain,
            http: {
              paths: [
                {
                  path: "/",
                  pathType: "Prefix",
                  backend: { service: { name, port: { name: "http" } } },
                },
              ],
            },
          },
        ],
      },
    });
  }
  return objects.map((object) => ({ object, origin: "spec.source.image" }));
}
