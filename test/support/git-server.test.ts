import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureFiles, type GitServer, REAL_FIXTURES, startGitServer } from "./git-server.ts";

const run = promisify(execFile);
const env = { ...process.env, GIT_TERMINAL_PROMPT: "0", GIT_CONFIG_NOSYSTEM: "1" };

/** `git <args>` with the real client; resolves to trimmed stdout. */
async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await run("git", args, { cwd, env })).stdout.trim();
}

describe("test git server", () => {
  let server: GitServer;
  let scratch: string;
  beforeAll(async () => {
    server = await startGitServer();
    scratch = mkdtempSync(join(tmpdir(), "plumb-git-client-"));
  });
  afterAll(async () => {
    await server.stop();
    rmSync(scratch, { recursive: true, force: true });
  });

  it("serves repositories that the git client can clone, over protocol v2", async () => {
    const repo = await server.createRepo("clone", { "a/b.yaml": "b: 1\n" }, { branch: "trunk" });
    const dir = join(scratch, "clone");
    await run("git", ["-c", "protocol.version=2", "clone", "--quiet", repo.url, dir], { env });
    expect(await git(dir, "rev-parse", "HEAD")).toBe(await repo.head());
    expect(await git(dir, "branch", "--show-current")).toBe("trunk");
    const res = await fetch(`${repo.url}/info/refs?service=git-upload-pack`, {
      headers: { "Git-Protocol": "version=2" },
    });
    expect(res.headers.get("content-type")).toBe("application/x-git-upload-pack-advertisement");
    expect(await res.text()).toContain("version 2");
  });

  it("commits (null deletes), tags and reports the head", async () => {
    const repo = await server.createRepo("edits", { "a.yaml": "a\n", "b.yaml": "b\n" });
    const sha = await repo.commit({ "a.yaml": null, "c/d.yaml": "d\n" }, "edit");
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await repo.head()).toBe(sha);
    await repo.tag("v1", true);
    await repo.tag("v2");
    const refs = await git(scratch, "ls-remote", repo.url);
    expect(refs).toContain(`${sha}\trefs/heads/main`);
    expect(refs).toContain(`${sha}\trefs/tags/v1^{}`);
    expect(refs).toContain(`${sha}\trefs/tags/v2`);
    expect(await repo.git("ls-tree", "-r", "--name-only", sha)).toBe("b.yaml\nc/d.yaml");
  });

  it("requires basic auth when set", async () => {
    const repo = await server.createRepo("locked", { "a.yaml": "a\n" });
    server.setAuth("alice", "secret");
    try {
      const denied = await fetch(`${repo.url}/info/refs?service=git-upload-pack`);
      expect(denied.status).toBe(401);
      expect(denied.headers.get("www-authenticate")).toMatch(/^Basic /);
      const authed = repo.url.replace("http://", "http://alice:secret@");
      expect(await git(scratch, "ls-remote", authed, "HEAD")).toContain("HEAD");
    } finally {
      server.setAuth(undefined);
    }
  });

  it("injects faults", async () => {
    const repo = await server.createRepo("faulty", { "a.yaml": "a\n" });
    server.setFault({ status: 502 });
    const res = await fetch(`${repo.url}/info/refs?service=git-upload-pack`);
    server.setFault(undefined);
    expect(res.status).toBe(502);
  });

  it("reads fixture directories", () => {
    expect(existsSync(REAL_FIXTURES)).toBe(true);
    const files = fixtureFiles(join(REAL_FIXTURES, "podinfo-webapp"));
    expect(Object.keys(files).sort()).toContain("backend/deployment.yaml");
    expect(Object.keys(files)).toHaveLength(9);
  });
});
