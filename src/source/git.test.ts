import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fixtureFiles,
  type GitServer,
  REAL_FIXTURES,
  startGitServer,
  type TestRepo,
} from "../../test/support/git-server.ts";
import type { GitSource } from "../app/index.ts";
import { SourceError } from "../core/index.ts";
import { createGitPort } from "./git.ts";

const port = createGitPort();
const src = (url: string, ref = "HEAD", path = "."): GitSource => ({ url, ref, path });

/** The SourceError `promise` rejects with (fails the test when it resolves or throws another). */
async function failure(promise: Promise<unknown>): Promise<SourceError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return err as SourceError;
}

let server: GitServer;
beforeAll(async () => {
  server = await startGitServer();
});
afterAll(async () => {
  await server.stop();
});

describe("resolve", () => {
  let repo: TestRepo;
  let first: string;
  let tip: string;
  let dev: string;
  beforeAll(async () => {
    repo = await server.createRepo("refs", { "a.yaml": "a: 1\n" });
    first = await repo.head();
    await repo.tag("v1");
    await repo.tag("v1-annotated", true);
    tip = await repo.commit({ "b.yaml": "b: 1\n" });
    await repo.git("checkout", "--quiet", "-b", "dev");
    await repo.git("commit", "--quiet", "--allow-empty", "-m", "dev");
    await repo.git("push", "--quiet", "origin", "dev");
    dev = await repo.git("rev-parse", "HEAD");
    // A tag named like a branch: the branch wins.
    await repo.git("tag", "dev", first);
    await repo.git("push", "--quiet", "origin", "refs/tags/dev");
  });

  it("resolves HEAD to the default branch's tip", async () => {
    expect(await port.resolve(src(repo.url), undefined)).toBe(tip);
  });

  it("resolves a short branch name and a full one", async () => {
    expect(await port.resolve(src(repo.url, "main"), undefined)).toBe(tip);
    expect(await port.resolve(src(repo.url, "dev"), undefined)).toBe(dev);
    expect(await port.resolve(src(repo.url, "refs/heads/dev"), undefined)).toBe(dev);
  });

  it("resolves lightweight and annotated tags to commits", async () => {
    expect(await port.resolve(src(repo.url, "v1"), undefined)).toBe(first);
    expect(await port.resolve(src(repo.url, "v1-annotated"), undefined)).toBe(first);
    expect(await port.resolve(src(repo.url, "refs/tags/v1-annotated"), undefined)).toBe(first);
    expect(await port.resolve(src(repo.url, "refs/tags/dev"), undefined)).toBe(first);
  });

  it("returns a full SHA as is, lower-cased, without a request", async () => {
    const before = server.requests.length;
    expect(await port.resolve(src(repo.url, first.toUpperCase()), undefined)).toBe(first);
    expect(server.requests.length).toBe(before);
  });

  it("rejects an unknown ref permanently", async () => {
    const err = await failure(port.resolve(src(repo.url, "nope"), undefined));
    expect(err.message).toBe(`ref "nope" not found in ${repo.url}`);
    expect(err.transient).toBe(false);
    const short = await failure(port.resolve(src(repo.url, first.slice(0, 7)), undefined));
    expect(short.message).toContain("abbreviated commit SHAs are not supported");
  });

  it("resolves against a protocol v1 server too", async () => {
    const old = await startGitServer({ v1Only: true });
    try {
      const r = await old.createRepo("v1", { "a.yaml": "a: 1\n" });
      await r.tag("t", true);
      const sha = await r.head();
      expect(await port.resolve(src(r.url), undefined)).toBe(sha);
      expect(await port.resolve(src(r.url, "t"), undefined)).toBe(sha);
      expect(await port.fetch(src(r.url, "t"), sha, undefined)).toHaveLength(1);
    } finally {
      await old.stop();
    }
  });

  it("rejects a non-http URL permanently", async () => {
    const err = await failure(port.resolve(src("ftp://u:pw@host/x.git"), undefined));
    expect(err.message).toBe("repository URL ftp://host/x.git is not http(s)");
    expect(err.transient).toBe(false);
  });

  it("rejects malformed ref names without a request", async () => {
    const before = server.requests.length;
    for (const bad of ["a b", "x..y", "main\n", "v1^{}", "heads/"]) {
      const err = await failure(port.resolve(src(repo.url, bad), undefined));
      expect(err.message).toBe(`invalid ref "${bad}"`);
      expect(err.transient).toBe(false);
    }
    expect(server.requests.length).toBe(before);
  });

  it("reports a missing repository permanently", async () => {
    const err = await failure(port.resolve(src(`${server.url}/missing.git`), undefined));
    expect(err.transient).toBe(false);
  });
});

describe("fetch", () => {
  it("returns the guestbook fixture sorted by path", async () => {
    const files = fixtureFiles(join(REAL_FIXTURES, "guestbook"));
    const repo = await server.createRepo("guestbook", files);
    const sha = await port.resolve(src(repo.url), undefined);
    const got = await port.fetch(src(repo.url), sha, undefined);
    expect(got.map((f) => f.path)).toEqual([
      "guestbook-ui-deployment.yaml",
      "guestbook-ui-svc.yaml",
    ]);
    for (const f of got) expect(f.content).toBe(files[f.path]);
  });

  it("scopes to the path, recursively, manifests only (no hidden files), in byte order", async () => {
    const repo = await server.createRepo("scoped", {
      "README.md": "# hi\n",
      "other/x.yaml": "x: 1\n",
      "apps/web/z.yaml": "z: 1\n",
      "apps/web/B.yml": "b: 1\n",
      "apps/web/a.json": "{}\n",
      "apps/web/notes.txt": "no\n",
      "apps/web/nested/deep/c.yaml": "c: 1\n",
      "apps/web/nested/x.yaml.bak": "no\n",
      "apps/web-two/y.yaml": "y: 1\n",
      ".github/workflows/ci.yml": "on: push\n",
      "apps/web/.hidden.yaml": "h: 1\n",
    });
    const sha = await repo.head();
    const expected = ["B.yml", "a.json", "nested/deep/c.yaml", "z.yaml"];
    for (const path of ["apps/web", "./apps/web/", "/apps//web"]) {
      const got = await port.fetch(src(repo.url, "HEAD", path), sha, undefined);
      expect(got.map((f) => f.path)).toEqual(expected);
    }
    const all = await port.fetch(src(repo.url), sha, undefined);
    expect(all.map((f) => f.path)).toEqual([
      "apps/web-two/y.yaml",
      "apps/web/B.yml",
      "apps/web/a.json",
      "apps/web/nested/deep/c.yaml",
      "apps/web/z.yaml",
      "other/x.yaml",
    ]);
  });

  /** A repository with `files` and then `links` (path → target) committed, pushed; its tip. */
  async function withLinks(
    name: string,
    files: Record<string, string>,
    links: Record<string, string>,
  ): Promise<{ repo: TestRepo; sha: string }> {
    const repo = await server.createRepo(name, files);
    const { mkdirSync, symlinkSync } = await import("node:fs");
    const { dirname } = await import("node:path");
    for (const [path, target] of Object.entries(links)) {
      mkdirSync(dirname(join(repo.workDir, path)), { recursive: true });
      symlinkSync(target, join(repo.workDir, path));
    }
    const sha = await repo.commit({}, "links");
    expect(await repo.git("ls-tree", "-r", "HEAD")).toMatch(/^120000 /m);
    return { repo, sha };
  }

  it("follows symlinks inside the repository: relative, absolute from the root, chains, directories", async () => {
    const { repo, sha } = await withLinks(
      "links",
      {
        "m/a.yaml": "a: 1\n",
        "common/cm.yaml": "kind: ConfigMap\n",
        "common/dir/x.yaml": "x: 1\n",
        "common/dir/deep/y.yml": "y: 1\n",
      },
      {
        "m/rel.yaml": "../common/cm.yaml",
        "m/abs.yaml": "/common/cm.yaml",
        "m/chain.yaml": "rel.yaml",
        "m/linked": "../common/dir",
        "m/through.yaml": "linked/x.yaml",
        "m/notes.txt": "../common/cm.yaml",
      },
    );
    const head = await repo.head();
    await repo.git("update-index", "--add", "--cacheinfo", `160000,${head},m/sub`);
    await repo.git("commit", "--quiet", "-m", "submodule");
    await repo.git("push", "--quiet", "origin", "HEAD:refs/heads/main");
    const tip = await repo.head();
    const got = await port.fetch(src(repo.url, "main", "m"), tip, undefined);
    expect(got).toEqual([
      { path: "a.yaml", content: "a: 1\n" },
      { path: "abs.yaml", content: "kind: ConfigMap\n" },
      { path: "chain.yaml", content: "kind: ConfigMap\n" },
      { path: "linked/deep/y.yml", content: "y: 1\n" },
      { path: "linked/x.yaml", content: "x: 1\n" },
      { path: "rel.yaml", content: "kind: ConfigMap\n" },
      { path: "through.yaml", content: "x: 1\n" },
    ]);
    // The App's path itself may go through a link.
    const viaLink = await port.fetch(src(repo.url, "main", "m/linked"), sha, undefined);
    expect(viaLink.map((f) => f.path)).toEqual(["deep/y.yml", "x.yaml"]);
  });

  it("refuses a link out of the repository, a dangling link and loops, naming the link", async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [
        { "m/out.yaml": "../../etc/passwd" },
        'symlink "m/out.yaml" points outside the repository ("../../etc/passwd"); a link must resolve inside it',
      ],
      [
        { "m/gone.yaml": "missing.yaml" },
        'symlink "m/gone.yaml" points to "missing.yaml", which does not exist at SHA',
      ],
      [
        { "m/a.yaml": "b.yaml", "m/b.yaml": "a.yaml" },
        'symlink "m/a.yaml" is part of a loop: more than 40 links followed',
      ],
      [{ "m/up": ".." }, 'symlink "m/up" is part of a loop: it points to ".", which holds it'],
      [
        { "m/a.yaml": "b.yaml", "m/b.yaml": "../../x.yaml" },
        'symlink "m/b.yaml" points outside the repository ("../../x.yaml") (followed from "m/a.yaml"); a link must resolve inside it',
      ],
    ];
    let i = 0;
    for (const [links, message] of cases) {
      const { repo, sha } = await withLinks(`bad-links-${i++}`, { "m/ok.yaml": "o: 1\n" }, links);
      const err = await failure(port.fetch(src(repo.url, "main", "m"), sha, undefined));
      expect(err.message).toBe(message.replace("SHA", sha));
      expect(err.transient).toBe(false);
      const whole = await failure(port.fetchSource!(src(repo.url, "main", "m"), sha, undefined));
      expect(whole.message).toBe(message.replace("SHA", sha));
    }
  });

  it("fetchSource follows links for Kustomize and Helm: a linked base, a linked kustomization, a linked chart", async () => {
    const { repo, sha } = await withLinks(
      "kustomize-links",
      {
        "bases/web/kustomization.yaml": "resources: [deploy.yaml]\n",
        "bases/web/deploy.yaml": "kind: Deployment\n",
        "overlays/dev/kustomization.yaml": "resources: [../../linked-base]\n",
        "real/kustomization.yaml": "resources: []\n",
        "charts/web/Chart.yaml": "name: web\n",
      },
      {
        "linked-base": "bases/web",
        "only-link/kustomization.yaml": "../real/kustomization.yaml",
        "charts/linked": "web",
      },
    );
    const k = await port.fetchSource!(src(repo.url, "HEAD", "overlays/dev"), sha, undefined);
    expect(k.kind).toBe("kustomize");
    const files = k.kind === "manifests" ? [] : k.files;
    const text = (p: string) => new TextDecoder().decode(files.find((f) => f.path === p)?.data);
    expect(files.map((f) => f.path)).toEqual([
      "linked-base/deploy.yaml",
      "linked-base/kustomization.yaml",
      "overlays/dev/kustomization.yaml",
    ]);
    expect(text("linked-base/deploy.yaml")).toBe("kind: Deployment\n");
    const linked = await port.fetchSource!(src(repo.url, "HEAD", "only-link"), sha, undefined);
    expect(linked.kind).toBe("kustomize");
    const chart = await port.fetchSource!(src(repo.url, "HEAD", "charts/linked"), sha, undefined);
    expect(chart).toMatchObject({ kind: "helm", path: "charts/linked" });
  });

  it("refuses Kustomize and Helm directories, also nested ones", async () => {
    const repo = await server.createRepo("kustomize", {
      "k/kustomization.yaml": "resources: [a.yaml]\n",
      "k/a.yaml": "a: 1\n",
      "n/a.yaml": "a: 1\n",
      "n/base/Kustomization": "resources: []\n",
      "h/Chart.yaml": "name: c\n",
    });
    const sha = await repo.head();
    const k = await failure(port.fetch(src(repo.url, "HEAD", "k"), sha, undefined));
    expect(k.message).toBe(
      'kustomization.yaml found in "k": a Kustomize overlay or Helm chart is rendered only when source.path is its own directory, not a folder above it',
    );
    expect(k.transient).toBe(false);
    const n = await failure(port.fetch(src(repo.url, "HEAD", "n"), sha, undefined));
    expect(n.message).toMatch(/^base\/Kustomization found in "n"/);
    const h = await failure(port.fetch(src(repo.url, "HEAD", "h"), sha, undefined));
    expect(h.message).toMatch(/^Chart.yaml found in "h"/);
  });

  it("fetchSource: a kustomization or Chart.yaml at the path brings what it renders from", async () => {
    const repo = await server.createRepo("sources", {
      "overlays/dev/kustomization.yaml": "resources: [../../bases/web]\n",
      "overlays/dev/.env": "A=1\n",
      "bases/web/kustomization.yaml": "resources: [cm.yaml]\n",
      "bases/web/cm.yaml": "a: 1\n",
      "charts/web/Chart.yaml": "name: web\n",
      "charts/web/.helmignore": "*.md\n",
      "charts/web/kustomization.yml": "resources: []\n",
      "plain/cm.yaml": "a: 1\n",
      "docs/logo.bin": "\u0000\u00ff",
    });
    const sha = await repo.head();
    const k = await port.fetchSource!(src(repo.url, "HEAD", "./overlays/dev/"), sha, undefined);
    expect(k.kind).toBe("kustomize");
    if (k.kind === "manifests") return;
    expect(k.path).toBe("overlays/dev");
    // Only what the overlay renders from: its own folder and the base it names.
    expect(k.files.map((f) => f.path)).toEqual([
      "bases/web/cm.yaml",
      "bases/web/kustomization.yaml",
      "overlays/dev/.env",
      "overlays/dev/kustomization.yaml",
    ]);
    expect(new TextDecoder().decode(k.files[0]?.data)).toBe("a: 1\n");
    const h = await port.fetchSource!(src(repo.url, "HEAD", "charts/web"), sha, undefined);
    // Both files: Kustomize wins, as Flux would render the directory.
    expect(h.kind).toBe("kustomize");
    await repo.commit({ "charts/web/kustomization.yml": null });
    const h2 = await port.fetchSource!(
      src(repo.url, "HEAD", "charts/web"),
      await repo.head(),
      undefined,
    );
    expect(h2.kind === "helm" ? h2.path : h2.kind).toBe("charts/web");
    const p = await port.fetchSource!(src(repo.url, "HEAD", "plain"), sha, undefined);
    expect(p).toEqual({ kind: "manifests", files: [{ path: "cm.yaml", content: "a: 1\n" }] });
    const capped = await failure(
      createGitPort({ maxRepositoryFiles: 3 }).fetchSource!(
        src(repo.url, "HEAD", "overlays/dev"),
        sha,
        undefined,
      ),
    );
    expect(capped.message).toBe(`"overlays/dev" renders from more than 3 files at ${sha}`);
    const listed = await failure(
      createGitPort({ maxRepositoryFiles: 0 }).fetchSource!(
        src(repo.url, "HEAD", "overlays/dev"),
        sha,
        undefined,
      ),
    );
    expect(listed.message).toBe(
      `the repository has more than 0 files at ${sha} (20 times the 0 files one App may read)`,
    );
  });

  it("fetchSource reads and caps only what the App renders from; a big blob is refused by its declared size", async () => {
    const big = "x".repeat(3 * 1024 * 1024);
    const readsBig = "resources: [../big/huge.yaml]\n";
    const repo = await server.createRepo("reachable", {
      "apps/k/kustomization.yaml":
        "resources: [../../bases/web, ../../extra/one.yaml]\nconfigMapGenerator:\n- name: c\n  files: [conf=../../conf/app.conf]\n",
      "bases/web/kustomization.yaml": "resources: [cm.yaml]\n",
      "bases/web/cm.yaml": "a: 1\n",
      "extra/one.yaml": "b: 1\n",
      "extra/other.yaml": "c: 1\n",
      "conf/app.conf": "k=v\n",
      "charts/web/Chart.yaml":
        "name: web\ndependencies:\n- name: lib\n  repository: file://../lib\n",
      "charts/web/templates/cm.yaml": "kind: ConfigMap\n",
      "charts/lib/Chart.yaml": "name: lib\n",
      "values/prod.yaml": "r: 2\n",
      "values/unused.yaml": "r: 3\n",
      "reads-big/kustomization.yaml": readsBig,
      "big/huge.yaml": big,
    });
    const sha = await repo.head();
    const capped = createGitPort({ maxRepositoryBytes: 1024 * 1024 });
    const k = await capped.fetchSource!(src(repo.url, "HEAD", "apps/k"), sha, undefined);
    expect(k.kind === "manifests" ? [] : k.files.map((f) => f.path)).toEqual([
      "apps/k/kustomization.yaml",
      "bases/web/cm.yaml",
      "bases/web/kustomization.yaml",
      "conf/app.conf",
      "extra/one.yaml",
    ]);
    const h = await capped.fetchSource!(src(repo.url, "HEAD", "charts/web"), sha, undefined, {
      valuesFiles: ["../../values/prod.yaml"],
    });
    expect(h.kind === "manifests" ? [] : h.files.map((f) => f.path)).toEqual([
      "charts/lib/Chart.yaml",
      "charts/web/Chart.yaml",
      "charts/web/templates/cm.yaml",
      "values/prod.yaml",
    ]);
    const err = await failure(
      capped.fetchSource!(src(repo.url, "HEAD", "reads-big"), sha, undefined),
    );
    expect(err.message).toBe(
      `the files "reads-big" renders from exceed the 1048576-byte cap at ${sha} (at big/huge.yaml, ${big.length + readsBig.length} bytes in all)`,
    );
    expect(err.transient).toBe(false);
  });

  it("reports a missing path, or a path that is a file, permanently", async () => {
    const repo = await server.createRepo("paths", { "a/b.yaml": "b: 1\n" });
    const sha = await repo.head();
    const missing = await failure(port.fetch(src(repo.url, "HEAD", "a/nope"), sha, undefined));
    expect(missing.message).toBe(`path "a/nope" not found at ${sha}`);
    expect(missing.transient).toBe(false);
    const file = await failure(port.fetch(src(repo.url, "HEAD", "a/b.yaml"), sha, undefined));
    expect(file.message).toBe(`path "a/b.yaml" is not a directory at ${sha}`);
  });

  it("follows new commits; an older resolved commit still fetches its own content", async () => {
    const repo = await server.createRepo("moving", { "cm.yaml": "v: 1\n" });
    const old = await port.resolve(src(repo.url, "main"), undefined);
    const next = await repo.commit({ "cm.yaml": "v: 2\n", "new.yaml": "n: 1\n" });
    expect(await port.resolve(src(repo.url, "main"), undefined)).toBe(next);
    const now = await port.fetch(src(repo.url, "main"), next, undefined);
    expect(now).toEqual([
      { path: "cm.yaml", content: "v: 2\n" },
      { path: "new.yaml", content: "n: 1\n" },
    ]);
    // The branch moved after `old` was resolved: fetch still returns `old`'s files.
    const before = await port.fetch(src(repo.url, "main"), old, undefined);
    expect(before).toEqual([{ path: "cm.yaml", content: "v: 1\n" }]);
  });

  it("works the same on a server that allows any SHA in want", async () => {
    const repo = await server.createRepo(
      "lenient",
      { "a.yaml": "v: 1\n" },
      { allowSha1InWant: true },
    );
    const old = await repo.head();
    await repo.commit({ "a.yaml": "v: 2\n" });
    expect(await port.fetch(src(repo.url), old, undefined)).toEqual([
      { path: "a.yaml", content: "v: 1\n" },
    ]);
  });

  it("fails transiently when the commit was force-pushed away, permanently for a pinned SHA", async () => {
    const repo = await server.createRepo("forced", { "a.yaml": "v: 1\n" });
    const gone = await repo.commit({ "a.yaml": "v: 2\n" });
    await repo.git("reset", "--quiet", "--hard", "HEAD~1");
    await repo.git("push", "--quiet", "--force", "origin", "HEAD:refs/heads/main");
    const moved = await failure(port.fetch(src(repo.url, "main"), gone, undefined));
    expect(moved.transient).toBe(true);
    expect(moved.message).toContain("no longer reachable");
    const pinned = await failure(port.fetch(src(repo.url, gone), gone, undefined));
    expect(pinned.transient).toBe(false);
    expect(pinned.message).toBe(`commit ${gone} not found in ${repo.url}`);
  });

  it("enforces the file, byte and download limits", async () => {
    const repo = await server.createRepo("big", {
      "a.yaml": "a: 1\n",
      "b.yaml": "b: 1\n",
      "c.yaml": "x".repeat(2000),
    });
    const sha = await repo.head();
    const files = await failure(
      createGitPort({ maxFiles: 2 }).fetch(src(repo.url), sha, undefined),
    );
    expect(files.message).toContain("more than 2 manifest files");
    const bytes = await failure(
      createGitPort({ maxBytes: 1000 }).fetch(src(repo.url), sha, undefined),
    );
    expect(bytes.message).toContain("exceed 1000 bytes");
    const dl = createGitPort({ maxDownloadBytes: 300 });
    const download = await failure(dl.fetch(src(repo.url), sha, undefined));
    expect(download.message).toContain("more than 300 bytes");
    expect(download.transient).toBe(false);
  });
});

describe("podinfo fixture", () => {
  it("fetches every manifest of podinfo-webapp", async () => {
    const files = fixtureFiles(join(REAL_FIXTURES, "podinfo-webapp"));
    const repo = await server.createRepo("podinfo", files);
    const sha = await port.resolve(src(repo.url), undefined);
    const got = await port.fetch(src(repo.url), sha, undefined);
    expect(got.map((f) => f.path)).toEqual(Object.keys(files).sort());
    expect(got.map((f) => f.path)).toContain("backend/deployment.yaml");
  });
});

describe("authentication and failures", () => {
  let auth: GitServer;
  let repo: TestRepo;
  beforeAll(async () => {
    auth = await startGitServer();
    repo = await auth.createRepo("private", { "a.yaml": "a: 1\n" });
  });
  afterAll(async () => {
    await auth.stop();
  });

  it("fails permanently without or with wrong credentials, without leaking them", async () => {
    auth.setAuth("x-access-token", "t0ken-secret");
    const none = await failure(port.resolve(src(repo.url), undefined));
    expect(none.message).toBe(`authentication failed for ${repo.url} (HTTP 401)`);
    expect(none.transient).toBe(false);
    const wrong = await failure(port.resolve(src(repo.url), { token: "wr0ng-secret" }));
    expect(wrong.message).toContain("authentication failed");
    expect(wrong.message).not.toContain("wr0ng-secret");
  });

  it("uses a token as x-access-token basic auth for resolve and fetch", async () => {
    auth.setAuth("x-access-token", "t0ken-secret");
    const sha = await port.resolve(src(repo.url), { token: "t0ken-secret" });
    expect(sha).toBe(await repo.head());
    const files = await port.fetch(src(repo.url), sha, { token: "t0ken-secret" });
    expect(files).toEqual([{ path: "a.yaml", content: "a: 1\n" }]);
  });

  it("uses username and password, or userinfo in the URL", async () => {
    auth.setAuth("alice", "pa55-secret");
    const creds = { username: "alice", password: "pa55-secret" };
    const sha = await port.resolve(src(repo.url), creds);
    expect(await port.fetch(src(repo.url), sha, creds)).toHaveLength(1);
    const withUserinfo = repo.url.replace("http://", "http://alice:pa55-secret@");
    expect(await port.resolve(src(withUserinfo), undefined)).toBe(sha);
    const bad = await failure(
      port.resolve(src(repo.url.replace("http://", "http://alice:n0pe-secret@")), undefined),
    );
    expect(bad.message).toBe(`authentication failed for ${repo.url} (HTTP 401)`);
    auth.setAuth(undefined);
  });

  it("fails transiently on 5xx", async () => {
    auth.setFault({ status: 503 });
    const err = await failure(port.resolve(src(repo.url), undefined));
    auth.setFault(undefined);
    expect(err.transient).toBe(true);
    expect(err.message).toBe(`Git server ${repo.url} answered HTTP 503`);
  });

  it("times out transiently", async () => {
    auth.setFault("hang");
    const quick = createGitPort({ timeoutMs: 200 });
    const err = await failure(quick.resolve(src(repo.url), undefined));
    auth.setFault(undefined);
    expect(err.transient).toBe(true);
    expect(err.message).toBe(`timed out after 200 ms reading ${repo.url}`);
  });

  it("fails transiently on an unreachable server and never shows the password", async () => {
    const closed = await startGitServer();
    const url = `${closed.url.replace("http://", "http://bob:hunter2-secret@")}/x.git`;
    await closed.stop();
    const err = await failure(port.resolve(src(url), { password: "other-secret", username: "u" }));
    expect(err.transient).toBe(true);
    expect(err.message).toContain(`could not read from ${closed.url}/x.git`);
    expect(err.message).not.toMatch(/hunter2|other-secret|bob/);
    const viaFetch = await failure(port.fetch(src(url), "a".repeat(40), undefined));
    expect(viaFetch.transient).toBe(true);
    expect(viaFetch.message).not.toContain("hunter2");
  });

  it("never shows a token given in the URL's query string (closed port)", async () => {
    const url = "http://127.0.0.1:9/r.git?access_token=S3CRET";
    const resolved = await failure(port.resolve(src(url), undefined));
    expect(resolved.transient).toBe(true);
    expect(resolved.message).toMatch(/^could not read from http:\/\/127\.0\.0\.1:9\/r\.git\?…: /);
    expect(resolved.message).not.toContain("S3CRET");
    expect(resolved.message).not.toContain("access_token=S3CRET");
    const fetched = await failure(port.fetch(src(url), "a".repeat(40), undefined));
    expect(fetched.transient).toBe(true);
    expect(fetched.message).toMatch(/^could not read from http:\/\/127\.0\.0\.1:9\/r\.git\?…: /);
    expect(fetched.message).not.toContain("S3CRET");
    expect(fetched.message).not.toContain("access_token=S3CRET");
  });

  it("never shows the query of a URL in a message from the server's answer", async () => {
    auth.setAuth("x-access-token", "t0ken-secret");
    const url = `${repo.url}?access_token=Q-S3CRET#frag-S3CRET`;
    const err = await failure(port.resolve(src(url), undefined));
    auth.setAuth(undefined);
    expect(err.message).toBe(`authentication failed for ${repo.url}?…#… (HTTP 401)`);
    const timedOut = await failure(
      createGitPort({ timeoutMs: 1 }).resolve(src(`${repo.url}?t=S3CRET`), undefined),
    );
    expect(timedOut.message).toBe(`timed out after 1 ms reading ${repo.url}?…`);
  });

  it("never shows the query of a malformed or non-http(s) URL", async () => {
    const bad = await failure(
      port.resolve(src("http://[bad/r.git?access_token=S3CRET"), undefined),
    );
    expect(bad.message).toBe("invalid repository URL http://[bad/r.git?…");
    const ssh = await failure(
      port.resolve(src("ssh://git@host/r.git?access_token=S3CRET"), undefined),
    );
    expect(ssh.message).toBe("repository URL ssh://host/r.git?… is not http(s)");
  });
});
