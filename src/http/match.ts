// Which Apps a Git push concerns. Pure: no I/O.

/** Default ports dropped from repository keys, by scheme. */
const DEFAULT_PORTS: Record<string, string> = { http: "80", https: "443", ssh: "22", git: "9418" };

/** `scheme://[userinfo@]host[:port][/path]`, host possibly an IPv6 literal in brackets. */
const URL_FORM = /^([a-z][a-z0-9+.-]*):\/\/(?:[^/?#]*@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?([^?#]*)/i;
/** Git's scp-like syntax `[user@]host:path` (no "://", a colon before any slash). */
const SCP_FORM = /^(?:[^@/:]+@)?(\[[^\]]*\]|[^:/]+):(?!\/\/)(.*)$/;

/**
 * The key under which two spellings of one repository compare equal: `host[:port]/path`.
 *
 * Lower-cases host and path, drops scheme, userinfo, query, fragment and the scheme's default
 * port (http 80, https 443, ssh 22, git 9418), strips leading slashes from the path, then one
 * trailing "/" and one trailing ".git". So `git@host:org/demo.git`, `ssh://git@host:22/org/demo`,
 * `https://user:pass@HOST/org/demo.git/` and `http://host/org/demo` all give `host/org/demo`.
 * A non-default port is kept (`localhost:3000/gitea/webhooks`). Input in no known form is
 * returned trimmed and lower-cased.
 */
export function normalizeRepoUrl(url: string): string {
  const s = url.trim();
  let host: string;
  let port = "";
  let path: string;
  const u = URL_FORM.exec(s);
  const scp = u ? null : SCP_FORM.exec(s);
  if (u) {
    const scheme = (u[1] ?? "").toLowerCase();
    host = u[2] ?? "";
    port = u[3] ?? "";
    if (port === DEFAULT_PORTS[scheme]) port = "";
    path = u[4] ?? "";
  } else if (scp) {
    host = scp[1] ?? "";
    path = scp[2] ?? "";
  } else {
    return s.toLowerCase();
  }
  path = path.replace(/^\/+/, "");
  if (path.endsWith("/")) path = path.slice(0, -1);
  if (path.toLowerCase().endsWith(".git")) path = path.slice(0, -4);
  return `${host}${port ? `:${port}` : ""}/${path}`.toLowerCase();
}

/**
 * The full ref name for an App's `spec.source.git.ref`: "main" → "refs/heads/main",
 * "refs/…" unchanged, "HEAD" → "HEAD". (A full commit SHA is returned as "refs/heads/<sha>";
 * {@link appMatchesPush} recognises SHAs before qualifying.)
 */
export function qualifyRef(ref: string): string {
  if (ref === "HEAD" || ref.startsWith("refs/")) return ref;
  return `refs/heads/${ref}`;
}

/** A full commit id: SHA-1 (40 hex) or SHA-256 (64 hex). */
const FULL_SHA = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/i;

/** What a push webhook says about the push, as far as matching needs. */
export interface PushRef {
  /** Every URL the payload gives for the repository (clone, ssh, web...). */
  repoUrls: readonly string[];
  /** The full ref pushed, e.g. "refs/heads/main" or "refs/tags/v1.2.0". */
  ref: string;
  /** The repository's default branch name ("main"), when the payload says. */
  defaultBranch?: string | undefined;
}

/**
 * Whether a push concerns an App whose source is `source` (`spec.source.git`).
 *
 * - Repository: {@link normalizeRepoUrl} of the App's URL equals that of one of the push's
 *   URLs (equality, never a prefix: org/demo does not match org/demo-copy).
 * - Ref: the App's ref, qualified with {@link qualifyRef}, equals the pushed ref. An App on
 *   "HEAD" follows the default branch: it matches pushes to refs/heads/<defaultBranch>, or to
 *   any branch when the payload does not name the default branch (an extra reconcile is
 *   harmless; a missed one waits for the next scheduled run). A short name ("v1.2.0") also
 *   matches refs/tags/<name>, as git's own ref lookup would. An App pinned to a full commit
 *   SHA never matches: a push cannot change what it deploys.
 */
export function appMatchesPush(source: { url: string; ref?: string }, push: PushRef): boolean {
  const ref = source.ref ?? "HEAD";
  if (FULL_SHA.test(ref)) return false;
  const key = normalizeRepoUrl(source.url);
  if (!push.repoUrls.some((u) => normalizeRepoUrl(u) === key)) return false;
  if (ref === "HEAD") {
    if (push.defaultBranch) return push.ref === `refs/heads/${push.defaultBranch}`;
    return push.ref.startsWith("refs/heads/");
  }
  if (ref.startsWith("refs/")) return push.ref === ref;
  return push.ref === `refs/heads/${ref}` || push.ref === `refs/tags/${ref}`;
}

/** The repositories a push names, as {@link normalizeRepoUrl} compares them, each once. */
export function pushRepositories(push: PushRef): string[] {
  return [...new Set(push.repoUrls.map(normalizeRepoUrl))];
}

/** Whether an App's `spec.source.git.url` is one of the push's repositories (ref aside). */
export function sameRepository(source: { url: string }, push: PushRef): boolean {
  const key = normalizeRepoUrl(source.url);
  return push.repoUrls.some((u) => normalizeRepoUrl(u) === key);
}

/**
 * Why a push matched no App, for the webhook's answer: the repositories and ref it was
 * compared as, and how many Apps follow that repository on another ref (`onOtherRefs`, a
 * count: never their names, namespaces or refs, which the sender need not know).
 */
export function noMatchReason(push: PushRef, onOtherRefs: number): string {
  if (onOtherRefs === 0) {
    return `no App's spec.source.git.url is this repository (compared as ${pushRepositories(push).join(", ")}: scheme, credentials, default port, a trailing "/" and ".git" aside)`;
  }
  const head = push.defaultBranch ? `; HEAD follows the default branch, ${push.defaultBranch}` : "";
  const apps = onOtherRefs === 1 ? "1 App follows" : `${onOtherRefs} Apps follow`;
  return `${apps} this repository, none on ${push.ref} (spec.source.git.ref: a branch, refs/heads/…, a tag or refs/tags/…, or HEAD${head}; an App pinned to a commit never matches a push)`;
}
