// The CLI verbs for people: `plumb get` prints Apps like `flux get`; `plumb approve|
// reject|sync|rollback|restart` writes spec.operation exactly as the HTTP API does (the same
// buildOperation and submitOperation), straight to the cluster: no plumb server needed.
// Loaded only when a verb runs; heavy modules are imported inside.
import { userInfo } from "node:os";
import type { App } from "../src/app/index.ts";
import { shortRevision as shortOf } from "../src/core/revisions.ts";
import type { AppTarget, VerbArgs } from "./cli-verbs-args.ts";

/** Message column width in the table. */
const MESSAGE_WIDTH = 72;

/**
 * Runs a verb against the cluster of `kubeconfig` (undefined: the default loading rules).
 * Prints to stdout; a refusal or a missing App goes to stderr.
 * @returns the exit code: 0 done, 1 the App does not exist or the operation was refused.
 */
export async function runVerb(
  args: Exclude<VerbArgs, { kind: "diff" }>,
  kubeconfig: string | undefined,
): Promise<number> {
  const kube = await import("../src/kube/index.ts");
  const node = await import("../src/kube/node.ts");
  const store = kube.createKubePort(node.nodeKubeTransport(kubeconfig));
  const http = await import("../src/http/index.ts");
  // NAME without -n: the kubeconfig context's namespace, as kubectl reads it.
  const namespaceOf = (t: AppTarget) => t.namespace ?? node.kubeconfigNamespace(kubeconfig);

  if (args.kind === "get") {
    let apps: App[];
    if (args.target) {
      const namespace = namespaceOf(args.target);
      const app = await store.getApp(namespace, args.target.name);
      if (!app) return notFound(`${namespace}/${args.target.name}`);
      if (args.output === "json") {
        console.log(JSON.stringify(http.summarize(app), null, 2));
        return 0;
      }
      apps = [app];
    } else {
      const namespace = args.allNamespaces
        ? undefined
        : (args.namespace ?? node.kubeconfigNamespace(kubeconfig));
      apps = (await store.listApps(namespace)).sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
          `${b.metadata.namespace}/${b.metadata.name}`,
        ),
      );
      if (args.output === "json") {
        const now = new Date();
        console.log(JSON.stringify({ items: apps.map((a) => http.summarize(a, now)) }, null, 2));
        return 0;
      }
    }
    console.log(formatTable(apps, args.allNamespaces, new Date()));
    return 0;
  }

  const id = `${namespaceOf(args)}/${args.name}`;
  const app = await store.getApp(namespaceOf(args), args.name);
  if (!app) return notFound(id);
  let op: ReturnType<typeof http.buildOperation>;
  try {
    op = http.buildOperation(app, { type: args.type, revision: args.revision }, who(), new Date());
  } catch (err) {
    if (!(err instanceof http.OperationRefused)) throw err;
    console.error(`plumb: ${args.type} of ${id} refused: ${err.message}`);
    return 1;
  }
  await http.submitOperation({ apps: store }, app, op, "cli");
  console.log(
    JSON.stringify({
      app: id,
      operation: op,
      message: `${http.describeOperation(op)}: the next reconcile carries it out (plumb reconcile ${id} runs one now)`,
    }),
  );
  return 0;
}

/** Recorded as requestedBy: "cli:<login name>" (for the record, not authentication). */
function who(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return "cli";
  }
}

function notFound(id: string): number {
  console.error(`plumb: App ${id} not found`);
  return 1;
}

/** "45s", "12m", "3h", "2d": how long ago `time` was, kubectl's AGE style; "-" for never. */
export function age(time: string | undefined, now: Date): string {
  const ms = time ? Date.parse(time) : Number.NaN;
  if (Number.isNaN(ms)) return "-";
  const s = Math.max(0, Math.round((now.getTime() - ms) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 7200) return `${Math.floor(s / 60)}m`;
  if (s < 172800) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/**
 * The Apps as an aligned table like `flux get`: [NAMESPACE] NAME REVISION SYNC HEALTH HELD
 * LAST SYNC MESSAGE (the Ready condition's message, cut to {@link MESSAGE_WIDTH} characters;
 * the App's own fields never span lines).
 */
export function formatTable(apps: readonly App[], withNamespace: boolean, now: Date): string {
  const header = ["NAME", "REVISION", "SYNC", "HEALTH", "HELD", "LAST SYNC", "MESSAGE"];
  const rows = apps.map((a) => {
    const s = a.status ?? {};
    const ready = s.conditions?.find((c) => c.type === "Ready");
    const message = (ready?.message ?? s.healthReason ?? "").replace(/\s+/g, " ");
    return [
      a.metadata.name,
      shortRevision(s.revision),
      s.syncStatus ?? "-",
      s.healthStatus ?? "-",
      s.heldRevision ? shortRevision(s.heldRevision) : "-",
      age(s.lastSyncedAt, now),
      message.length > MESSAGE_WIDTH ? `${message.slice(0, MESSAGE_WIDTH - 1)}…` : message,
    ];
  });
  const all = withNamespace
    ? [["NAMESPACE", ...header], ...rows.map((r, i) => [apps[i]!.metadata.namespace, ...r])]
    : [header, ...rows];
  const widths = all[0]!.map((_, col) => Math.max(...all.map((r) => (r[col] ?? "").length)));
  return all
    .map((r) =>
      r.map((cell, col) => (col === r.length - 1 ? cell : cell.padEnd(widths[col]!))).join("  "),
    )
    .join("\n");
}

/** The short form plumb shows everywhere (and accepts back), "-" for none. */
function shortRevision(rev: string | undefined): string {
  return rev ? shortOf(rev) : "-";
}
