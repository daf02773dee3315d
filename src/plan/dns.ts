// DNS plan: which records an App's domains need in the zone, given what is there. Records are
// plumb's when their comment names the App; anything else at a name is someone else's and is
// never touched. Pure.
import type { DnsRecord, DnsRecordInput, NamespacedName } from "../core/index.ts";

/** The comment plumb writes on each record it makes for App `app`. */
export function dnsComment(app: NamespacedName): string {
  return `managed-by=plumb app=${app.namespace}/${app.name}`;
}

export interface DnsPlanInput {
  app: NamespacedName;
  /** Host names the App serves now (its Ingress rules' hosts). */
  hosts: readonly string[];
  /** Zone name: hosts outside it are left out. */
  zone: string;
  target: string;
  type: "A" | "AAAA" | "CNAME";
  proxied: boolean;
  /** Records named like the hosts, and every record with the App's comment (any order). */
  existing: readonly DnsRecord[];
}

export interface DnsConflict {
  host: string;
  /** For a condition: which record is in the way and whose it is. */
  message: string;
}

/** What to do, in the order to do it: delete, then update, then create. */
export interface DnsPlan {
  delete: DnsRecord[];
  update: Array<{ id: string; record: DnsRecordInput }>;
  create: DnsRecordInput[];
  /** Hosts left without plumb's record because someone else's record is at the name. */
  conflicts: DnsConflict[];
  /** Hosts outside the zone (no record). */
  outside: string[];
}

const ADDRESS = new Set(["A", "AAAA", "CNAME"]);

/**
 * Plans the App's records (external-dns' ownership rule, with the owner in the record's
 * comment instead of a TXT record):
 * - a host in the zone gets one record of `type` pointing at `target`, proxied as configured,
 *   with the App's comment; an existing record of the App's is kept when it already says so,
 *   updated when its content or proxying differs, replaced (deleted, then created) when its type
 *   differs, and extra ones of the App's at the name are deleted;
 * - a host where a record not made by this App sits (an A, AAAA or CNAME; or anything at all
 *   when plumb would write a CNAME, which shares its name with nothing) is a conflict: nothing
 *   at that name is touched, plumb's own record included;
 * - the App's records for names it no longer serves are deleted.
 * Output is sorted by host, so the same input gives the same plan.
 */
export function planDns(input: DnsPlanInput): DnsPlan {
  const comment = dnsComment(input.app);
  const plan: DnsPlan = { delete: [], update: [], create: [], conflicts: [], outside: [] };
  const hosts = [...new Set(input.hosts.map(normalize))].sort();
  const inZone = hosts.filter((h) => h === input.zone || h.endsWith(`.${input.zone}`));
  plan.outside = hosts.filter((h) => !inZone.includes(h));
  const byName = new Map<string, DnsRecord[]>();
  const seen = new Set<string>();
  for (const r of [...input.existing].sort((a, b) => cmp(a.id, b.id))) {
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    const name = normalize(r.name);
    byName.set(name, [...(byName.get(name) ?? []), r]);
  }
  for (const host of inZone) {
    const at = byName.get(host) ?? [];
    const mine = at.filter((r) => r.comment === comment);
    const theirs = at.filter((r) => r.comment !== comment);
    const blocking = theirs.filter((r) => input.type === "CNAME" || ADDRESS.has(r.type));
    if (blocking.length > 0) {
      plan.conflicts.push({ host, message: conflictMessage(host, blocking) });
      continue;
    }
    const want: DnsRecordInput = {
      name: host,
      type: input.type,
      content: input.target,
      proxied: input.proxied,
      comment,
    };
    const same = mine.find((r) => r.type === want.type && equalRecord(r, want));
    const sameType = mine.find((r) => r.type === want.type);
    if (same) {
      plan.delete.push(...mine.filter((r) => r !== same));
    } else if (sameType) {
      plan.update.push({ id: sameType.id, record: want });
      plan.delete.push(...mine.filter((r) => r !== sameType));
    } else {
      plan.delete.push(...mine);
      plan.create.push(want);
    }
  }
  for (const [name, records] of [...byName].sort(([a], [b]) => cmp(a, b))) {
    if (inZone.includes(name)) continue;
    plan.delete.push(...records.filter((r) => r.comment === comment));
  }
  return plan;
}

function conflictMessage(host: string, records: readonly DnsRecord[]): string {
  const what = records
    .map((r) => {
      const owner = r.comment?.startsWith("managed-by=plumb app=")
        ? `App ${r.comment.slice("managed-by=plumb app=".length)}`
        : "someone else";
      return `${r.type} ${r.content} (made by ${owner})`;
    })
    .join(", ");
  return `${host}: left alone, its DNS already has ${what}`;
}

function equalRecord(r: DnsRecord, want: DnsRecordInput): boolean {
  return normalize(r.content) === normalize(want.content) && (r.proxied ?? false) === want.proxied;
}

/** Names and CNAME targets compare lower-case, without a trailing dot. */
function normalize(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
