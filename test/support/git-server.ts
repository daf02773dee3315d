// A real Git server over smart HTTP for tests: node:http in front of `git http-backend` (CGI),
// with bare repositories made by the real `git` command in a temporary directory.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Fixed identity and date so commits are reproducible. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: "Plumb Test",
  GIT_AUTHOR_EMAIL: "test@plumb.dev",
  GIT_AUTHOR_DATE: "2025-01-01T00:00:00Z",
  GIT_COMMITTER_NAME: "Plumb Test",
  GIT_COMMITTER_EMAIL: "test@plumb.dev",
  GIT_COMMITTER_DATE: "2025-01-01T00:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
};

export interface RepoOptions {
  /** Initial (default) branch; "main" unless given. */
  branch?: string;
  /**
   * Sets uploadpack.allowReachableSHA1InWant and allowAnySHA1InWant, as GitHub and GitLab do.
   * Off by default: a plain `git http-backend` only lets protocol-v1 clients want advertised tips.
   */
  allowSha1InWant?: boolean;
}

export interface TestRepo {
  /** Clone URL, http://127.0.0.1:<port>/<name>.git. */
  url: string;
  /** The non-bare work clone that commits are made in (for symlinks, submodules, ...). */
  workDir: string;
  /**
   * Writes `files` (path → content; null deletes) into the work clone, commits everything
   * (including changes made directly in workDir), pushes the current branch.
   * @returns the new commit's 40-hex SHA.
   */
  commit(files: Record<string, string | null>, message?: string): Promise<string>;
  /** Tags HEAD of the work clone (annotated with -a when `annotated`) and pushes the tag. */
  tag(name: string, annotated?: boolean): Promise<void>;
  /** SHA of the current branch's tip in the work clone. */
  head(): Promise<string>;
  /** Runs `git <args>` in the work clone; resolves to trimmed stdout. */
  git(...args: string[]): Promise<string>;
}

/**
 * A fault injected into every following request until cleared: an HTTP status, no answer
 * ("hang"), or a refusal as a Git server words one — HTTP 200 and a ref advertisement whose
 * only line is `ERR <text>` (the pack protocol's error packet, which Git shows as "remote
 * error: <text>") — with the text `refuse` makes of the request (its Authorization header,
 * as a careless server quotes it, and path).
 */
export type Fault =
  | { status: number }
  | { refuse: (request: { authorization: string | undefined; path: string }) => string }
  | "hang"
  | undefined;

export interface GitServer {
  /** Base URL, http://127.0.0.1:<port> (no trailing slash). */
  url: string;
  /** Directory holding the bare repositories. */
  root: string;
  /** Creates <name>.git with `files` committed on `options.branch` ("main"). */
  createRepo(name: string, files: Record<string, string>, options?: RepoOptions): Promise<TestRepo>;
  /** Requires HTTP basic auth with these credentials (401 + WWW-Authenticate otherwise); undefined turns it off. */
  setAuth(user: string | undefined, pass?: string): void;
  /** Makes every request fail (see {@link Fault}); undefined clears. */
  setFault(fault: Fault): void;
  /** Requests served so far, as "METHOD /path?query". */
  requests: string[];
  /** The Git-Protocol header of each request in `requests` ("version=2" for ls-refs). */
  protocols: Array<string | undefined>;
  /** Closes the server (and hanging requests) and deletes its directory unless it was given. */
  stop(): Promise<void>;
}

/** One pkt-line: its length (4 hex digits, header included), then `payload`. */
function pkt(payload: string): string {
  return (Buffer.byteLength(payload) + 4).toString(16).padStart(4, "0") + payload;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run("git", args, { cwd, env: { ...process.env, ...GIT_ENV } });
  return stdout.trim();
}

export interface ServerOptions {
  /** Ignore the Git-Protocol header, so clients get protocol v1 (as from old servers). */
  v1Only?: boolean;
  /**
   * A directory to keep the repositories in (created if missing, kept by `stop()`), for a server
   * that outlives its process; a fresh temporary directory, deleted by `stop()`, when absent.
   */
  dir?: string;
}

/** Starts a smart-HTTP Git server on 127.0.0.1 with a random port. */
export async function startGitServer(options: ServerOptions = {}): Promise<GitServer> {
  const base = options.dir ?? mkdtempSync(join(tmpdir(), "plumb-git-"));
  const root = join(base, "repos");
  mkdirSync(root, { recursive: true });
  let auth: string | undefined;
  let fault: Fault;
  const requests: string[] = [];
  const protocols: Array<string | undefined> = [];
  const children = new Set<ChildProcess>();
  const hanging = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const protocol = req.headers["git-protocol"];
    protocols.push(Array.isArray(protocol) ? protocol.join(",") : protocol);
    if (fault === "hang") {
      hanging.add(res);
      return;
    }
    if (fault !== undefined && "refuse" in fault) {
      const text = fault.refuse({ authorization: req.headers.authorization, path: req.url ?? "/" });
      const service = new URL(req.url ?? "/", "http://localhost").searchParams.get("service");
      res.writeHead(200, {
        "content-type": `application/x-${service ?? "git-upload-pack"}-advertisement`,
      });
      res.end(`${pkt(`# service=${service ?? "git-upload-pack"}\n`)}0000${pkt(`ERR ${text}\n`)}`);
      return;
    }
    if (fault !== undefined) {
      res.writeHead(fault.status, { "content-type": "text/plain" }).end("injected fault\n");
      return;
    }
    let user: string | undefined;
    if (auth !== undefined) {
      const header = req.headers.authorization ?? "";
      const given = header.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64") : "";
      if (given.toString() !== auth) {
        res.writeHead(401, { "www-authenticate": 'Basic realm="plumb-test"' }).end();
        return;
      }
      user = auth.slice(0, auth.indexOf(":"));
    }
    const child = cgi(root, req, res, user, options.v1Only === true);
    children.add(child);
    child.on("close", () => children.delete(child));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    root,
    requests,
    protocols,
    setAuth(user, pass) {
      auth = user === undefined ? undefined : `${user}:${pass ?? ""}`;
    },
    setFault(f) {
      fault = f;
    },
    async createRepo(name, files, options = {}) {
      const branch = options.branch ?? "main";
      const bare = join(root, `${name}.git`);
      const work = join(base, "work", name);
      await git(root, "init", "--quiet", "--bare", `--initial-branch=${branch}`, bare);
      if (options.allowSha1InWant) {
        await git(bare, "config", "uploadpack.allowReachableSHA1InWant", "true");
        await git(bare, "config", "uploadpack.allowAnySHA1InWant", "true");
      }
      mkdirSync(dirname(work), { recursive: true });
      await git(base, "init", "--quiet", `--initial-branch=${branch}`, work);
      await git(work, "remote", "add", "origin", bare);
      const repo: TestRepo = {
        url: `${url}/${name}.git`,
        workDir: work,
        async commit(changes, message = "update") {
          for (const [path, content] of Object.entries(changes)) {
            const file = join(work, path);
            if (content === null) rmSync(file, { force: true });
            else {
              mkdirSync(dirname(file), { recursive: true });
              writeFileSync(file, content);
            }
          }
          await git(work, "add", "--all");
          await git(work, "commit", "--quiet", "--allow-empty", "-m", message);
          await git(work, "push", "--quiet", "origin", `HEAD:refs/heads/${branch}`);
          return git(work, "rev-parse", "HEAD");
        },
        async tag(tagName, annotated = false) {
          const flags = annotated ? ["-a", "-m", `tag ${tagName}`] : [];
          await git(work, "tag", ...flags, tagName);
          await git(work, "push", "--quiet", "origin", `refs/tags/${tagName}`);
        },
        head: () => git(work, "rev-parse", "HEAD"),
        git: (...args) => git(work, ...args),
      };
      await repo.commit(files, "initial");
      return repo;
    },
    async stop() {
      for (const res of hanging) res.destroy();
      for (const child of children) child.kill();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (options.dir === undefined) rmSync(base, { recursive: true, force: true });
    },
  };
}

/** Runs one request through `git http-backend` and relays its CGI response. */
function cgi(
  root: string,
  req: IncomingMessage,
  res: ServerResponse,
  user: string | undefined,
  v1Only: boolean,
): ChildProcess {
  const u = new URL(req.url ?? "/", "http://localhost");
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: root,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: "1",
    PATH_INFO: decodeURIComponent(u.pathname),
    QUERY_STRING: u.search.slice(1),
    REQUEST_METHOD: req.method ?? "GET",
    CONTENT_TYPE: req.headers["content-type"] ?? "",
    REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
  };
  if (req.headers["content-length"]) env["CONTENT_LENGTH"] = req.headers["content-length"];
  if (req.headers["content-encoding"])
    env["HTTP_CONTENT_ENCODING"] = req.headers["content-encoding"];
  const protocol = req.headers["git-protocol"];
  if (typeof protocol === "string" && !v1Only) env["GIT_PROTOCOL"] = protocol;
  if (user !== undefined) env["REMOTE_USER"] = user;

  const child = spawn("git", ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
  req.pipe(child.stdin);
  child.stdin.on("error", () => {});
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on("data", (chunk: Buffer) => {
    if (headersDone) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = findHeaderEnd(head);
    if (end === undefined) return;
    headersDone = true;
    const { status, headers } = parseCgiHeaders(head.subarray(0, end.at).toString("latin1"));
    res.writeHead(status, headers);
    res.write(head.subarray(end.at + end.length));
  });
  child.stdout.on("end", () => {
    if (!headersDone) res.writeHead(502, { "content-type": "text/plain" });
    res.end();
  });
  child.on("error", () => {
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
  return child;
}

function findHeaderEnd(buf: Buffer): { at: number; length: number } | undefined {
  const crlf = buf.indexOf("\r\n\r\n");
  const lf = buf.indexOf("\n\n");
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, length: 4 };
  if (lf >= 0) return { at: lf, length: 2 };
  return undefined;
}

function parseCgiHeaders(text: string): { status: number; headers: Record<string, string> } {
  let status = 200;
  const headers: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    const value = line.slice(colon + 1).trim();
    if (name.toLowerCase() === "status") status = Number.parseInt(value, 10) || 200;
    else headers[name] = value;
  }
  return { status, headers };
}

/**
 * Reads every file under `dir`, recursively, into path → UTF-8 content (paths relative to `dir`,
 * "/"-separated). For committing test/fixtures/real/<name> into a test repository.
 */
export function fixtureFiles(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile())
        out[relative(dir, full).split("\\").join("/")] = readFileSync(full, "utf8");
    }
  };
  walk(dir);
  return out;
}

/** Absolute path of test/fixtures/real: real manifests, overlays and charts (see its SOURCES.md). */
export const REAL_FIXTURES = fileURLToPath(new URL("../fixtures/real", import.meta.url));
