// GET /metrics: Prometheus text exposition computed from the Apps' statuses at each scrape
// (stateless: the cluster is the only memory). Pure: the route lists the Apps and calls this.
import { type App, HEALTH_STATUSES, SYNC_STATUSES } from "../app/index.ts";
import { sourceOf } from "./appview.ts";

/** Content type of the text exposition format 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/). */
export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type Labels = Record<string, string>;
interface Family {
  name: string;
  help: string;
  samples: Array<{ labels: Labels; value: number }>;
}

/** Backslash, double quote and line feed escaped, as the text format requires of label values. */
function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

function driftedFields(app: App): number {
  return (app.status?.drift ?? []).reduce((n, d) => n + (d.fields?.length ?? 0), 0);
}

function failing(app: App): boolean {
  return (app.status?.failures ?? 0) > 0;
}

/** Seconds since the epoch of an RFC 3339 time, or undefined when absent or unparsable. */
function epochSeconds(time: string | undefined): number | undefined {
  if (!time) return undefined;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/**
 * The metrics of `apps`, all gauges (values are read from status, never counted here, so no
 * `_total`). Enumerations are one sample per possible value, 1 for the current one and 0 for
 * the others (kube-state-metrics' convention, e.g. kube_pod_status_phase); an App never
 * reconciled has status "Unknown". Per App (labels namespace, name):
 * - plumb_app_info{source_type, source, ref, revision} 1 (source without credentials;
 *   revision: the one applied, "" when none)
 * - plumb_app_sync_status{status}, plumb_app_health_status{status}
 * - plumb_app_last_synced_timestamp_seconds (only for Apps that have synced)
 * - plumb_app_consecutive_failures, plumb_app_drifted_fields, plumb_app_held (0/1)
 * Per namespace (label namespace): plumb_namespace_apps, plumb_namespace_apps_sync_status
 * {status}, plumb_namespace_apps_health_status{status}, plumb_namespace_apps_held,
 * plumb_namespace_apps_failing (consecutive failures > 0), plumb_namespace_apps_drifted.
 * Families are in a fixed order and samples sorted, so the output is deterministic.
 */
export function renderMetrics(apps: readonly App[]): string {
  const sorted = [...apps].sort((a, b) =>
    `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(
      `${b.metadata.namespace}/${b.metadata.name}`,
    ),
  );
  const id = (a: App): Labels => ({ namespace: a.metadata.namespace, name: a.metadata.name });
  const sync = (a: App) => a.status?.syncStatus ?? "Unknown";
  const health = (a: App) => a.status?.healthStatus ?? "Unknown";
  const held = (a: App) => (a.status?.heldRevision ? 1 : 0);

  const families: Family[] = [
    {
      name: "plumb_app_info",
      help: "An App's source and the revision applied; always 1.",
      samples: sorted.map((a) => {
        const source = sourceOf(a);
        return {
          labels: {
            ...id(a),
            source_type: source.type,
            source: source.location,
            ref: source.ref,
            revision: a.status?.revision ?? "",
          },
          value: 1,
        };
      }),
    },
    {
      name: "plumb_app_sync_status",
      help: "An App's sync status (status.syncStatus): 1 for the current value, 0 for the others.",
      samples: sorted.flatMap((a) =>
        SYNC_STATUSES.map((s) => ({
          labels: { ...id(a), status: s },
          value: sync(a) === s ? 1 : 0,
        })),
      ),
    },
    {
      name: "plumb_app_health_status",
      help: "An App's health (status.healthStatus): 1 for the current value, 0 for the others.",
      samples: sorted.flatMap((a) =>
        HEALTH_STATUSES.map((s) => ({
          labels: { ...id(a), status: s },
          value: health(a) === s ? 1 : 0,
        })),
      ),
    },
    {
      name: "plumb_app_last_synced_timestamp_seconds",
      help: "When an App last applied a revision successfully (status.lastSyncedAt), in seconds since the epoch.",
      samples: sorted.flatMap((a) => {
        const t = epochSeconds(a.status?.lastSyncedAt);
        return t === undefined ? [] : [{ labels: id(a), value: t }];
      }),
    },
    {
      name: "plumb_app_consecutive_failures",
      help: "Consecutive failed reconciles of an App (status.failures); 0 after a success.",
      samples: sorted.map((a) => ({ labels: id(a), value: a.status?.failures ?? 0 })),
    },
    {
      name: "plumb_app_drifted_fields",
      help: "Fields of an App's objects that drifted from the desired state (status.drift).",
      samples: sorted.map((a) => ({ labels: id(a), value: driftedFields(a) })),
    },
    {
      name: "plumb_app_held",
      help: "1 when a revision of the App is held for approval (status.heldRevision), else 0.",
      samples: sorted.map((a) => ({ labels: id(a), value: held(a) })),
    },
  ];

  const namespaces = [...new Set(sorted.map((a) => a.metadata.namespace))].sort();
  const inNs = (ns: string) => sorted.filter((a) => a.metadata.namespace === ns);
  const count = (ns: string, pred: (a: App) => boolean) => inNs(ns).filter(pred).length;
  families.push(
    {
      name: "plumb_namespace_apps",
      help: "Apps in a namespace.",
      samples: namespaces.map((ns) => ({ labels: { namespace: ns }, value: inNs(ns).length })),
    },
    {
      name: "plumb_namespace_apps_sync_status",
      help: "Apps in a namespace per sync status.",
      samples: namespaces.flatMap((ns) =>
        SYNC_STATUSES.map((s) => ({
          labels: { namespace: ns, status: s },
          value: count(ns, (a) => sync(a) === s),
        })),
      ),
    },
    {
      name: "plumb_namespace_apps_health_status",
      help: "Apps in a namespace per health status.",
      samples: namespaces.flatMap((ns) =>
        HEALTH_STATUSES.map((s) => ({
          labels: { namespace: ns, status: s },
          value: count(ns, (a) => health(a) === s),
        })),
      ),
    },
    {
      name: "plumb_namespace_apps_held",
      help: "Apps in a namespace with a revision held for approval.",
      samples: namespaces.map((ns) => ({
        labels: { namespace: ns },
        value: count(ns, (a) => held(a) === 1),
      })),
    },
    {
      name: "plumb_namespace_apps_failing",
      help: "Apps in a namespace whose last reconcile failed (consecutive failures > 0).",
      samples: namespaces.map((ns) => ({ labels: { namespace: ns }, value: count(ns, failing) })),
    },
    {
      name: "plumb_namespace_apps_drifted",
      help: "Apps in a namespace with drifted fields.",
      samples: namespaces.map((ns) => ({
        labels: { namespace: ns },
        value: count(ns, (a) => driftedFields(a) > 0),
      })),
    },
  );

  const lines: string[] = [];
  for (const f of families) {
    lines.push(`# HELP ${f.name} ${f.help}`, `# TYPE ${f.name} gauge`);
    for (const s of f.samples) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(",");
      lines.push(`${f.name}{${labels}} ${formatValue(s.value)}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
