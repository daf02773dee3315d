// Types shared by the HTTP app's routes.
import type { KubePort } from "../reconcile/ports.ts";
import type { Caller } from "./auth.ts";
import type { HttpConfig } from "./config.ts";
import type { Log } from "./errors.ts";

/** An App by namespace and name. */
export interface AppKey {
  namespace: string;
  name: string;
}

/** What the HTTP app needs from its runtime (Worker or Node). */
export interface HttpDeps {
  /** Cluster access: listApps, getApp, setOperation, emitEvent. */
  kube: KubePort;
  config: HttpConfig;
  /** Schedule reconciles of these Apps now (queue on Workers, in-process on Node). Returns quickly. */
  trigger(apps: AppKey[], reason: string): Promise<void>;
  now(): Date;
  /** Operator log; entries never carry secrets, tokens or bodies. */
  log?: Log;
}

/** Hono environment of the app: the authenticated caller on /api routes. */
export interface HttpEnv {
  Variables: { caller: Caller };
}
