// Needs: `needs: [postgres, redis]` expanded, before rendering, into workloads of their own,
// the Secrets holding their generated passwords, and the variables every consumer gets. Pure.
import {
  ANNOTATION_GENERATE,
  ANNOTATION_PRUNE,
  ANNOTATION_SSA,
  type Need,
  PRUNE_DISABLED,
  SSA_IF_NOT_PRESENT,
} from "../../app/index.ts";
import type { KubeObject } from "../../core/index.ts";
import { resourcesFor } from "./sizes.ts";
import { type EnvVar, selectorLabels, type Workload } from "./workload.ts";

/** Images of the backing services (official Docker Hub images, pinned to a major version). */
export const NEED_IMAGES: Readonly<Record<Need, string>> = {
  postgres: "docker.io/library/postgres:17",
  redis: "docker.io/library/redis:7.4",
};
/** Capacity of the postgres data volume. */
export const POSTGRES_STORAGE = "10Gi";
/** Database and user postgres is initialised with. */
const PG_USER = "app";
const PG_DATABASE = "app";
/** Key of the generated password in each need's Secret. */
const PASSWORD_KEY = "password";

/** What the needs of an App expand into. */
export interface Expanded {
  workloads: Workload[];
  /** One Secret per need, its password generated once by plumb (see ANNOTATION_GENERATE). */
  secrets: KubeObject[];
  /** Variables every service and job gets, in dependency order (a $(VAR) follows VAR). */
  env: EnvVar[];
}

/** Object name of need `need` of App `app`: "<app>-postgres", "<app>-redis". */
export function needName(app: string, need: Need): string {
  return `${app}-${need}`;
}

/** Variable `variable` from the password of Secret `secret`. */
const secretRef = (secret: string, variable: string): EnvVar => ({
  name: variable,
  valueFrom: { secretKeyRef: { name: secret, key: PASSWORD_KEY } },
});

/**
 * Expands `needs` of App `app`, in the order postgres, redis (whatever the spec's order):
 * - postgres: a StatefulSet with a 10Gi volume claim (the StatefulSet controller's PVCs are
 *   never deleted with it), a Service on 5432, readiness by `pg_isready`; consumers get PGHOST,
 *   PGPORT, PGUSER, PGDATABASE, PGPASSWORD and DATABASE_URL (libpq's variables, Heroku's URL).
 * - redis: a Deployment with `--requirepass`, a Service on 6379; consumers get REDIS_HOST,
 *   REDIS_PORT, REDIS_PASSWORD and REDIS_URL.
 * Each password lives in a Secret named like the need, annotated so plumb generates it once,
 * applies it only if absent and never prunes it. The URLs are made of the other variables with
 * Kubernetes' $(VAR) expansion, so the password never appears in the Pod spec and a consumer
 * that sets PGDATABASE (say) of its own gets it in DATABASE_URL too.
 */
export function expandNeeds(
  app: string,
  needs: readonly Need[],
  imagePullSecrets: readonly string[],
): Expanded {
  const out: Expanded = { workloads: [], secrets: [], env: [] };
  if (needs.includes("postgres")) {
    const name = needName(app, "postgres");
    out.secrets.push(passwordSecret(app, name, "database"));
    out.workloads.push({
      name,
      component: "database",
      kind: "StatefulSet",
      image: NEED_IMAGES.postgres,
      port: { number: 5432, name: "postgres", servicePort: 5432 },
      env: [
        { name: "POSTGRES_USER", value: PG_USER },
        { name: "POSTGRES_DB", value: PG_DATABASE },
        secretRef(name, "POSTGRES_PASSWORD"),
        // The volume's root holds lost+found; initdb wants an empty directory.
        { name: "PGDATA", value: "/var/lib/postgresql/data/pgdata" },
      ],
      envFrom: [],
      replicas: 1,
      resources: resourcesFor("medium"),
      readiness: {
        kind: "exec",
        command: ["pg_isready", "-h", "127.0.0.1", "-U", PG_USER, "-d", PG_DATABASE],
      },
      volume: { path: "/var/lib/postgresql/data", size: POSTGRES_STORAGE },
      domains: [],
      imagePullSecrets: [...imagePullSecrets],
    });
    out.env.push(
      { name: "PGHOST", value: name },
      { name: "PGPORT", value: "5432" },
      { name: "PGUSER", value: PG_USER },
      { name: "PGDATABASE", value: PG_DATABASE },
      secretRef(name, "PGPASSWORD"),
      {
        name: "DATABASE_URL",
        value: "postgres://$(PGUSER):$(PGPASSWORD)@$(PGHOST):$(PGPORT)/$(PGDATABASE)",
      },
    );
  }
  if (needs.includes("redis")) {
    const name = needName(app, "redis");
    out.secrets.push(passwordSecret(app, name, "cache"));
    out.workloads.push({
      name,
      component: "cache",
      kind: "Deployment",
      image: NEED_IMAGES.redis,
      port: { number: 6379, name: "redis", servicePort: 6379 },
      args: ["--requirepass", "$(REDIS_PASSWORD)"],
      env: [secretRef(name, "REDIS_PASSWORD")],
      envFrom: [],
      replicas: 1,
      resources: resourcesFor("small"),
      readiness: { kind: "tcp", port: "redis" },
      domains: [],
      imagePullSecrets: [...imagePullSecrets],
    });
    out.env.push(
      { name: "REDIS_HOST", value: name },
      { name: "REDIS_PORT", value: "6379" },
      secretRef(name, "REDIS_PASSWORD"),
      { name: "REDIS_URL", value: "redis://:$(REDIS_PASSWORD)@$(REDIS_HOST):$(REDIS_PORT)/0" },
    );
  }
  return out;
}

/** The Secret of a need's password: generated once, applied only if absent, never pruned. */
function passwordSecret(app: string, name: string, component: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      labels: { ...selectorLabels(app, name), "app.kubernetes.io/component": component },
      annotations: {
        [ANNOTATION_GENERATE]: PASSWORD_KEY,
        [ANNOTATION_PRUNE]: PRUNE_DISABLED,
        [ANNOTATION_SSA]: SSA_IF_NOT_PRESENT,
      },
    },
    type: "Opaque",
  };
}
