// GitPort over Git smart HTTP with isomorphic-git and an in-memory file system.
// Runs in Node and in Cloudflare workerd: no node:fs, no isomorphic-git/http/node. workerd needs
// nodejs_compat with compatibility_date >= 2024-09-23 (isomorphic-git's deps import "buffer" and
// isomorphic-git uses the Buffer global; memfs imports node:buffer, node:path, node:events...).
import type { HttpClient } from "isomorphic-git";
import git from "isomorphic-git";
import webHttp from "isomorphic-git/http/web";
import type { GitSource } from "../app/index.ts";
import type { SourceFile } from "../core/index.ts";
import { SourceError } from "../core/index.ts";
import type { FetchedSource, GitPort, SourceAuth } from "../reconcile/ports.ts";
import {
  brokenObjects,
  emptyRepository,
  type Fetched,
  packOf,
  type RevisionStore,
  repositoryFromPack,
} from "./cache.ts";
import { type Guard, guardHttp, type Remote, remoteFor, toSourceError } from "./http.ts";
import { collectRepository, sourceKindAt } from "./repo-tree.ts";
import { type CollectOptions, collectManifests, normalizePath } from "./tree.ts";

const SHA = /^[0-9a-f]{40}$/i;
/** Characters and sequences git check-ref-format forbids (and that would break ls-refs). */
const BAD_REF = /[~^:?*[\\]|\.\.|@\{|\/\/|^\/|\/$/;
const MiB = 1024 * 1024;

export interface GitPortOptions {
  /** HTTP client (default isomorphic-git/http/web, i.e. global fetch). */
  http?: HttpClient;
  /** Deadline for one resolve() or fetch() call, all requests included, ms (default 30 000). */
  timeoutMs?: number;
  /** Cap on the summed size of the manifests fetch() returns, bytes (default 20 MiB). */
  maxBytes?: number;
  /** Cap on the number of manifests fetch() returns (default 5 000). */
  maxFiles?: number;
  /**
   * Caps on the files fetchSource() reads for a Kustomize or Helm source (its path, the bases,
   * components and chart dependencies it names, its values files: collectRepository), bytes
   * and files (default maxBytes and maxFiles).
   */
  maxRepositoryBytes?: number;
  maxRepositoryFiles?: number;
  /**
   * Cap on bytes downloaded by one call (ref advertisement + pack), bytes (default 32 MiB).
   * isomorphic-git buffers the whole pack, copies it into the in-memory fs and indexes it, so
   * peak memory is several times the pack: measured in Node 24, +75 MiB RSS for a 4 MiB pack and
   * +160 MiB for a 15 MiB one. In workerd (128 MB per isolate) keep this near 8 MiB.
   */
  maxDownloadBytes?: number;
  /**
   * Fetched revisions kept in memory and shared (default 4; 0 keeps none): Apps on the same
   * repository, revision and credentials read their paths out of one fetch. Each
   * costs the memory of its pack (see maxDownloadBytes); the least recently used goes first.
   */
  sharedFetches?: number;
  /**
   * Packs of fetched commits kept beyond the process (Node: cache-disk.ts; default none). A
   * revision found there is read without a fetch; resolve() still asks the server every time.
   * See repositoryFromPack for how a stored pack is verified.
   */
  store?: RevisionStore;
}

/**
 * A GitPort speaking Git smart HTTP (protocol v2 ls-refs for resolve, v1 upload-pack for fetch).
 *
 * resolve(source, auth) → 40-hex commit SHA:
 * - "HEAD": the commit of the remote's HEAD (its default branch);
 * - a short name "x": refs/heads/x, else refs/tags/x (branches win, as in Argo CD);
 * - a full name "refs/...": exactly that ref;
 * - 40 hex digits: returned lower-cased without contacting the server.
 * Annotated tags resolve to the commit they point at (the peeled ^{} value).
 *
 * fetch(source, commit, auth) → manifests under source.path at `commit`: a shallow (depth 1)
 * fetch that *wants the commit by SHA*, into a fresh in-memory repository, then a tree walk
 * (no checkout). Smart HTTP servers accept any commit reachable from a ref (git http-backend
 * in stateless mode checks reachability; GitHub and GitLab allow reachable SHAs), so when the
 * branch moves between resolve() and fetch() the files are still those of `commit`. A commit
 * that is no longer reachable (force-push) fails transiently; a pinned SHA that the server does
 * not have fails permanently. See collectManifests for scoping, refusals and limits. The
 * fetched repository is kept (options.sharedFetches) under its URL, commit and credentials, so
 * another App on the same revision — another path, or the same — reads its files without a
 * second fetch; concurrent calls for one revision wait for one fetch.
 *
 * fetchSource(source, commit, auth, reads) → what source.path holds (sourceKindAt): plain
 * manifests as fetch returns them, or, for a directory holding a kustomization or Chart.yaml,
 * the files of the repository it renders from (collectRepository: bases such as
 * ../../bases/web, file:// chart dependencies and reads.valuesFiles elsewhere in the
 * repository; other files are never inflated). One download either way.
 *
 * Credentials: auth.token → basic auth (auth.username or "x-access-token", token);
 * auth.username/password → basic auth; else userinfo in the URL. Sent with every request,
 * never put in messages. Errors are SourceError: 401/403 "authentication failed for <url>",
 * unknown ref, missing path, limits (not transient); network failures, timeouts, 408/429/5xx
 * (transient).
 */
export function createGitPort(options: GitPortOptions = {}): GitPort {
  const http = options.http ?? webHttp;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxDownload = options.maxDownloadBytes ?? 32 * MiB;
  const maxBytes = options.maxBytes ?? 20 * MiB;
  const maxFiles = options.maxFiles ?? 5_000;
  const maxRepositoryBytes = options.maxRepositoryBytes ?? maxBytes;
  const maxRepositoryFiles = options.maxRepositoryFiles ?? maxFiles;
  const keep = options.sharedFetches ?? 4;
  /** Fetched revisions by key (insertion order = least recently used first). */
  const fetched = new Map<string, Promise<Fetched>>();

  /** Runs `fn` with a guarded client under the deadline; maps every failure to SourceError. */
  async function call<T>(
    source: GitSource,
    auth: SourceAuth | undefined,
    fn: (remote: Remote, client: HttpClient) => Promise<T>,
  ): Promise<T> {
    const remote = remoteFor(source.url, auth);
    const controller = new AbortController();
    const guard: Guard = { signal: controller.signal, bytes: 0, overLimit: false };
    const client = guardHttp(http, guard, maxDownload);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new SourceError(`timed out after ${timeoutMs} ms reading ${remote.display}`, true));
      }, timeoutMs);
    });
    try {
      return await Promise.race([fn(remote, client), deadline]);
    } catch (err) {
      if (guard.overLimit) {
        throw new SourceError(
          `${remote.display} sent more than ${maxDownload} bytes; the repository is too large to fetch`,
          false,
        );
      }
      throw toSourceError(err, remote);
    } finally {
      clearTimeout(timer);
      controller.abort();
    }
  }

  return {
    async resolve(source, auth) {
      const ref = source.ref;
      if (SHA.test(ref)) return ref.toLowerCase();
      if (BAD_REF.test(ref) || [...ref].some((c) => c <= " " || c === "\u007f")) {
        throw new SourceError(`invalid ref "${ref}"`, false);
      }
      const names =
        ref === "HEAD" || ref.startsWith("refs/")
          ? [ref]
          : [`refs/heads/${ref}`, `refs/tags/${ref}`];
      return call(source, auth, async (remote, client) => {
        for (const name of names) {
          const refs = await git.listServerRefs({
            http: client,
            url: remote.url,
            headers: { ...remote.headers },
            protocolVersion: 2,
            prefix: name,
            symrefs: true,
            peelTags: true,
          });
          const hit = refs.find((r) => r.ref === name);
          if (hit) return hit.peeled ?? hit.oid;
        }
        throw new SourceError(`ref "${ref}" not found in ${remote.display}${hint(ref)}`, false);
      });
    },

    async fetch(source, commit, auth): Promise<SourceFile[]> {
      return download(source, commit, auth, (at) => collectManifests(at));
    },

    async fetchSource(source, commit, auth, reads): Promise<FetchedSource> {
      return download(source, commit, auth, async (at) => {
        const kind = await sourceKindAt(at);
        if (kind === "manifests") return { kind, files: await collectManifests(at) };
        const files = await collectRepository(
          { ...at, maxBytes: maxRepositoryBytes, maxFiles: maxRepositoryFiles },
          { kind, files: kind === "helm" ? reads?.valuesFiles : undefined },
        );
        return { kind, path: normalizePath(source.path), files };
      });
    },
  };

  /**
   * `commit` of `source` in memory (a shallow fetch into a fresh in-memory repository, or one
   * kept from an earlier call: fetched), then `read` over it (no checkout). See createGitPort
   * for why a commit is fetched by SHA.
   */
  async function download<T>(
    source: GitSource,
    commit: string,
    auth: SourceAuth | undefined,
    read: (at: CollectOptions) => Promise<T>,
  ): Promise<T> {
    if (!SHA.test(commit)) throw new SourceError(`"${commit}" is not a full commit SHA`, false);
    const oid = commit.toLowerCase();
    let repo = await revision(source, oid, auth);
    for (;;) {
      try {
        return await read({ ...repo, commit: oid, path: source.path, maxBytes, maxFiles });
      } catch (err) {
        // A stored pack that lacks or garbles an object: forget it and fetch.
        if (!(repo.stored && brokenObjects(err)))
          throw toSourceError(err, remoteFor(source.url, auth));
        const key = keyOf(source, oid, auth);
        fetched.delete(key);
        await options.store?.drop(key);
        repo = await revision(source, oid, auth, false);
      }
    }
  }

  /** The revision `oid` of `source` in memory: kept, being fetched, or fetched now. */
  function revision(
    source: GitSource,
    oid: string,
    auth: SourceAuth | undefined,
    useStore = true,
  ): Promise<Fetched> {
    const key = keyOf(source, oid, auth);
    const hit = fetched.get(key);
    if (hit) {
      fetched.delete(key);
      fetched.set(key, hit);
      return hit;
    }
    const pinned = source.ref.toLowerCase() === oid;
    const store = options.store;
    const pending = (async () => {
      const packed = store && useStore ? await store.get(key) : undefined;
      const kept = packed && (await repositoryFromPack(packed, oid));
      if (kept) return kept;
      if (packed) await store?.drop(key);
      const repo = await call(source, auth, (remote, client) =>
        fetchRevision(remote, client, oid, pinned),
      );
      const pack = store && (await packOf(repo).catch(() => undefined));
      if (pack) await store?.put(key, pack);
      return repo;
    })();
    if (keep > 0) {
      fetched.set(key, pending);
      pending.catch(() => fetched.delete(key));
      for (const old of fetched.keys()) {
        if (fetched.size <= keep) break;
        fetched.delete(old);
      }
    }
    return pending;
  }
}

/**
 * The key of a revision in memory and in a RevisionStore. The credentials are part of it: a
 * fetch made with one token is never read by an App whose own credentials were not tried (a
 * pinned SHA is not resolved against the server, so nothing else would check them).
 */
function keyOf(source: GitSource, oid: string, auth: SourceAuth | undefined): string {
  return JSON.stringify([source.url, oid, auth?.username, auth?.password, auth?.token]);
}

/**
 * Fetches `oid` (depth 1, wanted by SHA) into a fresh in-memory bare repository. A commit the
 * server no longer has is SourceError: permanent when the App pins it (`pinned`), transient
 * when a branch moved past it (force-push; the next run resolves again).
 */
async function fetchRevision(
  remote: Remote,
  client: HttpClient,
  oid: string,
  pinned: boolean,
): Promise<Fetched> {
  // memfs only when a fetch happens: a no-op run resolves and stops.
  const { fs, gitdir, cache } = await emptyRepository();
  await git.addRemote({ fs, gitdir, remote: "origin", url: remote.url });
  await git.fetch({
    fs,
    http: client,
    gitdir,
    url: remote.url,
    ref: oid,
    singleBranch: true,
    depth: 1,
    tags: false,
    headers: { ...remote.headers },
    cache,
  });
  try {
    await git.readCommit({ fs, gitdir, cache, oid });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === "ObjectTypeError") {
      throw new SourceError(`${oid} in ${remote.display} is not a commit`, false);
    }
    if (code !== "NotFoundError") throw err;
    throw pinned
      ? new SourceError(`commit ${oid} not found in ${remote.display}`, false)
      : new SourceError(
          `commit ${oid} is no longer reachable from any ref in ${remote.display} (force-pushed?); will resolve again`,
          true,
        );
  }
  return { fs, gitdir, cache };
}

function hint(ref: string): string {
  if (ref === "HEAD") return " (the repository is empty or its HEAD names a missing branch)";
  if (/^[0-9a-f]{4,39}$/i.test(ref)) {
    return " (abbreviated commit SHAs are not supported; give all 40 hex digits)";
  }
  return "";
}
