// Test doubles for the HTTP app: an in-memory KubePort that records writes, and App builders.
import type { App, AppStatus } from "../app/index.ts";
import { API_VERSION, KIND } from "../app/index.ts";
import type { KubePort, RequestCounts } from "../reconcile/ports.ts";
import { KubeApiError } from "../reconcile/ports.ts";
import type { AppKey } from "./types.ts";

/** An App for tests: Git source `url`@`ref`, optional spec extras and status. */
export function testApp(
  namespace: string,
  name: string,
  opts: { url?: string; ref?: string; spec?: Record<string, unknown>; status?: AppStatus } = {},
): App {
  const git: Record<string, unknown> = {
    url: opts.url ?? `https://git.example.com/${namespace}/${name}.git`,
  };
  if (opts.ref !== undefined) git["ref"] = opts.ref;
  const app: App = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { namespace, name, resourceVersion: "1", generation: 1 },
    spec: { source: { git }, ...opts.spec },
  };
  if (opts.status) app.status = opts.status;
  return app;
}

/** Records of what the app asked the cluster and the scheduler to do. */
export interface FakeCalls {
  setOperation: Array<{ app: string; operation: Record<string, unknown> }>;
  emitEvent: Array<{ app: string; type: string; reason: string; message: string }>;
  listApps: Array<string | undefined>;
  getApp: string[];
  trigger: Array<{ apps: AppKey[]; reason: string }>;
}

/** A KubePort over an in-memory list of Apps; `fail` makes the next call of a method throw. */
export class FakeKube implements KubePort {
  readonly apps: App[];
  readonly calls: FakeCalls = {
    setOperation: [],
    emitEvent: [],
    listApps: [],
    getApp: [],
    trigger: [],
  };
  readonly fail: Partial<Record<"getApp" | "listApps" | "setOperation" | "emitEvent", Error>> = {};

  constructor(apps: App[] = []) {
    this.apps = apps;
  }

  private maybeFail(method: keyof FakeKube["fail"]): void {
    const err = this.fail[method];
    if (err) {
      delete this.fail[method];
      throw err;
    }
  }

  /** A `trigger` for HttpDeps that records into `calls.trigger`. */
  readonly trigger = async (apps: AppKey[], reason: string): Promise<void> => {
    this.calls.trigger.push({ apps, reason });
  };

  async getApp(namespace: string, name: string): Promise<App | undefined> {
    this.calls.getApp.push(`${namespace}/${name}`);
    this.maybeFail("getApp");
    return structuredClone(
      this.apps.find((a) => a.metadata.namespace === namespace && a.metadata.name === name),
    );
  }

  async listApps(namespace?: string): Promise<App[]> {
    this.calls.listApps.push(namespace);
    this.maybeFail("listApps");
    return structuredClone(
      this.apps.filter((a) => namespace === undefined || a.metadata.namespace === namespace),
    );
  }

  async setOperation(app: App, operation: Record<string, unknown>): Promise<App> {
    this.maybeFail("setOperation");
    const key = `${app.metadata.namespace}/${app.metadata.name}`;
    this.calls.setOperation.push({ app: key, operation });
    const stored = this.apps.find(
      (a) =>
        a.metadata.namespace === app.metadata.namespace && a.metadata.name === app.metadata.name,
    );
    if (!stored)
      throw new KubeApiError(404, "NotFound", `apps.plumb.dev "${app.metadata.name}" not found`);
    stored.spec = { ...(stored.spec as Record<string, unknown>), operation };
    return structuredClone(stored);
  }

  async emitEvent(
    app: App,
    event: { type: "Normal" | "Warning"; reason: string; message: string },
  ): Promise<void> {
    this.maybeFail("emitEvent");
    this.calls.emitEvent.push({ app: `${app.metadata.namespace}/${app.metadata.name}`, ...event });
  }

  setFinalizers(): Promise<App> {
    return unused("setFinalizers");
  }
  writeStatus(): Promise<App> {
    return unused("writeStatus");
  }
  getSecret(): Promise<Record<string, string> | undefined> {
    return unused("getSecret");
  }
  resourceFor(): Promise<undefined> {
    return unused("resourceFor");
  }
  apply(): Promise<never> {
    return unused("apply");
  }
  get(): Promise<undefined> {
    return unused("get");
  }
  list(): Promise<never[]> {
    return unused("list");
  }
  delete(): Promise<"gone"> {
    return unused("delete");
  }
  acquireLease(): Promise<boolean> {
    return unused("acquireLease");
  }
  releaseLease(): Promise<void> {
    return unused("releaseLease");
  }
  requestCounts(): RequestCounts {
    return { get: 0, list: 0, create: 0, update: 0, patch: 0, delete: 0 };
  }
}

function unused(method: string): Promise<never> {
  return Promise.reject(new Error(`FakeKube.${method} is not used by the HTTP app`));
}
