// DNS records as plumb sees them in a provider's zone (the DNS port and its pure plan share them).

/** A DNS record in the provider's zone. */
export interface DnsRecord {
  /** The provider's id of the record. */
  id: string;
  /** Fully qualified name, lower-case, without a trailing dot. */
  name: string;
  /** "A", "AAAA", "CNAME", or any other type (someone else's). */
  type: string;
  content: string;
  proxied?: boolean;
  /** Who made it: plumb's records say "managed-by=plumb app=<namespace>/<name>". */
  comment?: string;
}

/** What plumb writes to a record. */
export type DnsRecordInput = Omit<DnsRecord, "id">;
