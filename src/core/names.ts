// Kubernetes object names (apimachinery's validation.IsDNS1123Label / IsDNS1123Subdomain).

/** A DNS-1123 label: a Namespace's name, at most 63 characters. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** A DNS-1123 subdomain: most objects' names (an App's, a Secret's), at most 253 characters. */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** True when `name` can name a Namespace (DNS-1123 label, 1–63 characters). */
export function isDnsLabel(name: string): boolean {
  return name.length <= 63 && DNS_LABEL.test(name);
}

/** True when `name` can name an App or a Secret (DNS-1123 subdomain, 1–253 characters). */
export function isDnsSubdomain(name: string): boolean {
  return name.length <= 253 && DNS_SUBDOMAIN.test(name);
}
