// The Apps measured: guestbook and podinfo-webapp (real manifests, unchanged except where a
// namespace is rewritten for fresh-namespace runs) and a generated App of 50 objects in 5 kinds.
import { join } from "node:path";
import { fixtureFiles, REAL_FIXTURES } from "../test/support/git-server.ts";

export type CaseName = "guestbook" | "podinfo-webapp" | "generated-50" | "normalised-10";

export interface Case {
  name: CaseName;
  /** Files committed to the repository (path → content). */
  files(namespaceOverride?: string): Record<string, string>;
  /** Files that change one Deployment's image to `tag` (for "new commit" runs). */
  bump(tag: string, namespaceOverride?: string): Record<string, string>;
  /** The Deployment whose image `bump` changes, and the image it then has. */
  deployment: string;
  imageFor(tag: string): string;
  /** Namespace the real manifests target, if fixed (podinfo: webapp). */
  fixedNamespace?: string;
}

const GUESTBOOK_DEPLOY = "guestbook-ui-deployment.yaml";
const guestbookFiles = () => fixtureFiles(join(REAL_FIXTURES, "guestbook"));

export const guestbook: Case = {
  name: "guestbook",
  files: () => guestbookFiles(),
  bump: (tag) => ({
    [GUESTBOOK_DEPLOY]: guestbookFiles()[GUESTBOOK_DEPLOY]!.replace(
      "gb-frontend:v5",
      `gb-frontend:${tag}`,
    ),
  }),
  deployment: "guestbook-ui",
  imageFor: (tag) => `gcr.io/google-samples/gb-frontend:${tag}`,
};

const PODINFO_DEPLOY = "frontend/deployment.yaml";
/** podinfo-webapp's files; with `ns`, every "webapp" namespace (and the Namespace) becomes `ns`. */
function podinfoFiles(ns?: string): Record<string, string> {
  const files = fixtureFiles(join(REAL_FIXTURES, "podinfo-webapp"));
  if (!ns) return files;
  return Object.fromEntries(
    Object.entries(files).map(([p, c]) => [
      p,
      p === "common/namespace.yaml"
        ? c.replace("name: webapp", `name: ${ns}`)
        : c.replace(/namespace: webapp\b/g, `namespace: ${ns}`),
    ]),
  );
}

export const podinfo: Case = {
  name: "podinfo-webapp",
  fixedNamespace: "webapp",
  files: (ns) => podinfoFiles(ns),
  bump: (tag, ns) => ({
    [PODINFO_DEPLOY]: podinfoFiles(ns)[PODINFO_DEPLOY]!.replace(
      "image: ghcr.io/stefanprodan/podinfo:6.14.1",
      `image: ghcr.io/stefanprodan/podinfo:${tag}`,
    ),
  }),
  deployment: "frontend",
  imageFor: (tag) => `ghcr.io/stefanprodan/podinfo:${tag}`,
};

/** 10 each of ConfigMap, Service, ServiceAccount, Deployment, Role: 50 objects, 5 kinds. */
export function generatedFiles(tag = "1.27"): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < 10; i++) {
    files[`configmaps/cm-${i}.yaml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${i}\ndata:\n  index: "${i}"\n  greeting: hello-${i}\n`;
    files[`services/svc-${i}.yaml`] =
      `apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-${i}\nspec:\n  selector:\n    app: web-${i}\n  ports:\n    - port: 80\n      targetPort: 8080\n`;
    files[`serviceaccounts/sa-${i}.yaml`] =
      `apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa-${i}\n`;
    const image = i === 0 ? `nginx:${tag}` : "nginx:1.27";
    files[`deployments/web-${i}.yaml`] =
      `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-${i}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: web-${i}\n  template:\n    metadata:\n      labels:\n        app: web-${i}\n    spec:\n      serviceAccountName: sa-${i}\n      containers:\n        - name: web\n          image: ${image}\n          ports:\n            - containerPort: 8080\n`;
    files[`roles/role-${i}.yaml`] =
      `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: role-${i}\nrules:\n  - apiGroups: [""]\n    resources: ["configmaps"]\n    resourceNames: ["cm-${i}"]\n    verbs: ["get"]\n`;
  }
  return files;
}

export const generated50: Case = {
  name: "generated-50",
  files: () => generatedFiles(),
  bump: (tag) => ({ "deployments/web-0.yaml": generatedFiles(tag)["deployments/web-0.yaml"]! }),
  deployment: "web-0",
  imageFor: (tag) => `nginx:${tag}`,
};

export const CASES: readonly Case[] = [guestbook, podinfo, generated50];

/** The cron benchmark's repository: c/<i>/cm.yaml, one ConfigMap each (c-<i>). */
export function cronFiles(dirs: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < dirs; i++) {
    files[`c/${i}/cm.yaml`] =
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c-${i}\ndata:\n  index: "${i}"\n`;
  }
  return files;
}
