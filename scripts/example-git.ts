// The example's Git server, kept running beside the local control plane so the guestbook App
// keeps syncing after `npm start` exits, and so a push to it shows a sync:
//   node scripts/example-git.ts serve <dir>   serve <dir>/repos (creates apps.git from
//                                             infra/examples/guestbook the first time)
//   node scripts/example-git.ts stop <dir>    stop the server that serves <dir>
// `npm start` starts it detached through `ensureExampleGit`; `npm run cluster:stop` stops it.
// The repositories stay in <dir>, so what was pushed survives a stop and the next start.

import { spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fixtureFiles, startGitServer } from "../test/support/git-server.ts";

const ROOT = resolve(import.meta.dirname, "..");

/** What a running example server wrote to <dir>/server.json. */
interface ServerInfo {
  /** Base URL, http://127.0.0.1:<port>. */
  url: string;
  /** The server process's id. */
  pid: number;
}

/** The example repository's clone URL on a server at `base`. */
export function exampleRepoUrl(base: string): string {
  return `${base}/apps.git`;
}

function readInfo(dir: string): ServerInfo | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, "server.json"), "utf8")) as ServerInfo;
  } catch {
    return undefined;
  }
}

/** True when the server of `info` answers a Git ref advertisement for the example repository. */
async function answers(info: ServerInfo): Promise<boolean> {
  try {
    const res = await fetch(`${exampleRepoUrl(info.url)}/info/refs?service=git-upload-pack`, {
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Returns the base URL of the example Git server serving `dir`: the one running if it answers,
 * else a new detached one (its output in <dir>/server.log), which outlives this process.
 * @throws Error with the server's log when it exits before it serves.
 */
export async function ensureExampleGit(dir: string): Promise<string> {
  const running = readInfo(dir);
  if (running && (await answers(running))) return running.url;
  mkdirSync(dir, { recursive: true });
  const logPath = join(dir, "server.log");
  const log = openSync(logPath, "w");
  const child = spawn(process.execPath, [join(ROOT, "scripts/example-git.ts"), "serve", dir], {
    detached: true,
    stdio: ["ignore", log, log, "ipc"],
  });
  const url = await new Promise<string | undefined>((done) => {
    child.once("message", (m) => done((m as { url?: string }).url));
    child.once("exit", () => done(undefined));
  });
  if (url === undefined) {
    throw new Error(`the example Git server did not start:\n${readFileSync(logPath, "utf8")}`);
  }
  child.disconnect();
  child.unref();
  return url;
}

/** Serves <dir>/repos until SIGTERM/SIGINT; tells its parent the URL once it serves. */
async function serve(dir: string): Promise<void> {
  const git = await startGitServer({ dir });
  if (!existsSync(join(git.root, "apps.git"))) {
    const files = Object.fromEntries(
      Object.entries(fixtureFiles(join(ROOT, "infra/examples/guestbook"))).map(([p, c]) => [
        `guestbook/${p}`,
        c,
      ]),
    );
    const repo = await git.createRepo("apps", files);
    // A clone of it can push (git http-backend refuses receive-pack to anonymous users otherwise).
    await repo.git("--git-dir", join(git.root, "apps.git"), "config", "http.receivepack", "true");
  }
  writeFileSync(join(dir, "server.json"), JSON.stringify({ url: git.url, pid: process.pid }));
  const stop = () => {
    rmSync(join(dir, "server.json"), { force: true });
    git.stop().then(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  console.error(`serving ${exampleRepoUrl(git.url)} from ${git.root}`);
  process.send?.({ url: git.url });
}

/** Stops the example server of `dir`, if one runs. */
function stop(dir: string): void {
  const info = readInfo(dir);
  if (info === undefined) return;
  try {
    process.kill(info.pid, "SIGTERM");
    console.error(`stopped the example Git server (pid ${info.pid})`);
  } catch {
    // Already gone (a reboot, a kill): only its file is left.
  }
  rmSync(join(dir, "server.json"), { force: true });
}

if (import.meta.main) {
  const [command, dir] = process.argv.slice(2);
  if ((command !== "serve" && command !== "stop") || dir === undefined) {
    console.error("usage: node scripts/example-git.ts serve|stop <dir>");
    process.exit(2);
  }
  if (command === "stop") stop(resolve(dir));
  else
    serve(resolve(dir)).catch((err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    });
}
