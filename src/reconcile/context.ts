// What every step of one run shares: the App as read at the start, its last status, the ports
// and the run's clock. A plain value; the steps return what they found.
import type { App, AppStatus, InventoryEntry } from "../app/index.ts";
import { type NamespacedName, nameOf } from "../core/index.ts";
import type { SourceHint } from "../plan/index.ts";
import type { ClusterPort, Ports } from "./ports.ts";

/** How a run was asked for (issue 14): what its trigger knows that the App does not say. */
export interface RunOptions {
  /**
   * The run owes a full comparison (fetch, render, drift): the App's slot in its interval came,
   * or a person asked for the run. Otherwise a run that finds nothing new only looks at health.
   */
  compare?: boolean | undefined;
  /**
   * The revision the tick or a webhook resolved for a source (once per repository and ref);
   * used only when it names the App's own source (hintFits), else the run resolves it itself.
   */
  source?: SourceHint | undefined;
}

export interface RunContext {
  /** The App as read at the start of the run (its resourceVersion guards the status write). */
  readonly app: App;
  /** status as read at the start (empty for a new App). */
  readonly prev: AppStatus;
  readonly ports: Ports;
  /** The run's clock: every time written to status derives from it. */
  readonly now: Date;
  /** The App's namespace and name. */
  readonly ref: NamespacedName;
  /** "namespace/name", for messages and logs. */
  readonly id: string;
  /** status.inventory: what the App owned when the run started (with applied-form hashes). */
  readonly inventory: readonly InventoryEntry[];
  /** The cluster the App's objects go to (today the one the App lives in: ports.kube). */
  readonly cluster: ClusterPort;
  /** The run owes a full comparison (RunOptions.compare). */
  readonly compare: boolean;
  /** A revision resolved for the App's source by the trigger (RunOptions.source). */
  readonly hint: SourceHint | undefined;
}

/** The context of a run over `app`. */
export function runContext(
  app: App,
  ports: Ports,
  now: Date,
  options: RunOptions = {},
): RunContext {
  const prev = app.status ?? {};
  const ref = { namespace: app.metadata.namespace, name: app.metadata.name };
  return {
    app,
    prev,
    ports,
    now,
    ref,
    id: nameOf(ref),
    inventory: prev.inventory ?? [],
    cluster: ports.kube,
    compare: options.compare === true,
    hint: options.source,
  };
}
