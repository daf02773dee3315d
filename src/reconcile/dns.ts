// DNS records for the App's domains: after an apply, and on each full run while the
// applied set is the desired one, make the zone hold one record per host of the App's Ingresses
// (planDns), and remove the App's records when it is deleted.
import { DnsReason, type DnsRecord, EventReason, type KubeObject } from "../core/index.ts";
import { type DnsPlan, dnsComment, ingressHosts, planDns, type RunEvent } from "../plan/index.ts";
import type { RunContext } from "./context.ts";

/** What the DNS step found: the DNSRecords condition and the Events to emit. */
export interface DnsOutcome {
  condition: { status: "True" | "False"; reason: DnsReason; message: string };
  events: RunEvent[];
}

/**
 * Reconciles the records of the hosts the desired Ingresses serve, when the cluster settings
 * configure a zone (ports.dns). Reads: the App's records (by comment) and the records at each
 * host in the zone (by name); writes what planDns says, deletes first (a CNAME replacing an A
 * needs the name free). A record someone else made is never touched: the condition is False,
 * RecordConflict, naming it. A provider error is DNSFailed (retried on the next full run); the
 * run itself does not fail, as the App's objects are applied.
 * @returns undefined when DNS is not configured, or the App has no hosts and no records
 */
export async function syncDns(
  ctx: RunContext,
  objects: readonly KubeObject[],
): Promise<DnsOutcome | undefined> {
  const dns = ctx.ports.dns;
  if (!dns) return undefined;
  const hosts = [...new Set(objects.flatMap(ingressHosts))].sort();
  let plan: DnsPlan;
  const done: string[] = [];
  try {
    const existing: DnsRecord[] = await dns.records.listByComment(dnsComment(ctx.ref));
    if (hosts.length === 0 && existing.length === 0) return undefined;
    for (const host of hosts) {
      if (host === dns.zone || host.endsWith(`.${dns.zone}`)) {
        existing.push(...(await dns.records.listByName(host)));
      }
    }
    plan = planDns({
      app: ctx.ref,
      hosts,
      zone: dns.zone,
      target: dns.target,
      type: dns.type,
      proxied: dns.proxied,
      existing,
    });
    for (const r of plan.delete) {
      await dns.records.delete(r.id);
      done.push(`deleted ${r.type} ${r.name}`);
    }
    for (const u of plan.update) {
      await dns.records.update(u.id, u.record);
      done.push(`updated ${u.record.type} ${u.record.name}`);
    }
    for (const c of plan.create) {
      await dns.records.create(c);
      done.push(`created ${c.type} ${c.name}`);
    }
  } catch (e) {
    const message = `${e instanceof Error ? e.message : String(e)}${done.length > 0 ? ` (after: ${done.join(", ")})` : ""}`;
    return {
      condition: { status: "False", reason: DnsReason.DNSFailed, message },
      events: [{ type: "Warning", reason: DnsReason.DNSFailed, message }],
    };
  }
  const events: RunEvent[] = [];
  if (done.length > 0) {
    events.push({ type: "Normal", reason: EventReason.DNSUpdated, message: done.join(", ") });
  }
  const outside =
    plan.outside.length > 0 ? `; outside zone ${dns.zone}: ${plan.outside.join(", ")}` : "";
  if (plan.conflicts.length > 0) {
    const message = `${plan.conflicts.map((c) => c.message).join("; ")}${outside}`;
    events.push({ type: "Warning", reason: DnsReason.RecordConflict, message });
    return { condition: { status: "False", reason: DnsReason.RecordConflict, message }, events };
  }
  const served = hosts.filter((h) => !plan.outside.includes(h));
  const message =
    served.length > 0
      ? `${served.join(", ")} → ${dns.type} ${dns.target}${outside}`
      : `no domains${outside}`;
  return { condition: { status: "True", reason: DnsReason.RecordsReady, message }, events };
}

/**
 * Deletes every record whose comment names the App (its finalizer, when it prunes).
 * @returns the error message, or undefined when done (or DNS is not configured)
 */
export async function removeDnsRecords(ctx: RunContext): Promise<string | undefined> {
  const dns = ctx.ports.dns;
  if (!dns) return undefined;
  try {
    for (const r of await dns.records.listByComment(dnsComment(ctx.ref))) {
      await dns.records.delete(r.id);
    }
    return undefined;
  } catch (e) {
    return `could not remove DNS records: ${e instanceof Error ? e.message : String(e)}`;
  }
}
