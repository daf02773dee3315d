// The CLI's contract without a cluster: usage errors (exit 2), the kubeconfig check, NotFound.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  findKubeconfig,
  NO_KUBECONFIG,
  parseCliArgs,
  SERVICE_ACCOUNT_TOKEN,
  singleResult,
} from "./cli-args.ts";

const usage = (error: string) => ({ kind: "usage", error });

describe("parseCliArgs", () => {
  it("accepts the documented forms", () => {
    expect(parseCliArgs(["reconcile", "team-a/web"])).toEqual({
      kind: "reconcile",
      namespace: "team-a",
      name: "web",
      force: false,
      kubeconfig: undefined,
    });
    expect(parseCliArgs(["reconcile", "team-a/web.v2", "--kubeconfig", "/k"])).toEqual({
      kind: "reconcile",
      namespace: "team-a",
      name: "web.v2",
      force: false,
      kubeconfig: "/k",
    });
    expect(parseCliArgs(["reconcile", "--all"])).toEqual({
      kind: "reconcile-all",
      force: false,
      namespace: undefined,
      kubeconfig: undefined,
    });
    expect(parseCliArgs(["reconcile", "--all", "--force", "--namespace", "team-a"])).toEqual({
      kind: "reconcile-all",
      force: true,
      namespace: "team-a",
      kubeconfig: undefined,
    });
    expect(parseCliArgs(["serve"])).toEqual({
      kind: "serve",
      port: 8080,
      schedule: false,
      tickMs: 60_000,
      kubeconfig: undefined,
    });
    expect(parseCliArgs(["serve", "--schedule", "--tick", "5s"])).toMatchObject({
      kind: "serve",
      schedule: true,
      tickMs: 5000,
    });
    expect(parseCliArgs(["serve", "--port", "1"])).toMatchObject({
      kind: "serve",
      port: 1,
      kubeconfig: undefined,
    });
    expect(parseCliArgs(["serve", "--port=65535", "--kubeconfig=/k"])).toMatchObject({
      kind: "serve",
      port: 65535,
      kubeconfig: "/k",
    });
    expect(parseCliArgs(["--help"])).toEqual({ kind: "help", command: undefined });
    expect(parseCliArgs(["reconcile", "-h"])).toEqual({ kind: "help", command: "reconcile" });
    expect(parseCliArgs(["help"])).toEqual({ kind: "help", command: undefined });
    expect(parseCliArgs(["help", "serve"])).toEqual({ kind: "help", command: "serve" });
    expect(parseCliArgs(["help", "--help"])).toEqual({ kind: "help", command: undefined });
    expect(parseCliArgs(["help", "frobnicate"])).toEqual(
      usage('no help for "frobnicate": unknown command'),
    );
  });

  it("refuses --tick without --schedule, a bad tick, and serve's options elsewhere", () => {
    expect(parseCliArgs(["serve", "--tick", "5s"])).toEqual(usage("--tick needs --schedule"));
    for (const bad of ["0s", "500ms", "2h", "soon"]) {
      expect(parseCliArgs(["serve", "--schedule", "--tick", bad])).toEqual(
        usage(`--tick must be a duration from 1s to 1h such as 30s or 1m, got "${bad}"`),
      );
    }
    expect(parseCliArgs(["reconcile", "--all", "--schedule"])).toEqual(
      usage("--schedule is an option of serve"),
    );
    expect(parseCliArgs(["get", "--schedule"])).toEqual(
      usage("--schedule is not an option of get"),
    );
  });

  it("refuses unknown options and options without a value", () => {
    expect(parseCliArgs(["reconcile", "--bogus"])).toEqual(
      usage(
        "Unknown option '--bogus'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--bogus\"",
      ),
    );
    expect(parseCliArgs(["serve", "--port"])).toEqual(
      usage("Option '--port <value>' argument missing"),
    );
    expect(parseCliArgs(["reconcile", "--all=yes"])).toEqual(
      usage("Option '--all' does not take an argument"),
    );
  });

  it("--all takes --every DURATION and --shard I/N", () => {
    expect(parseCliArgs(["reconcile", "--all", "--every", "5m", "--shard", "2/4"])).toEqual({
      kind: "reconcile-all",
      force: false,
      namespace: undefined,
      kubeconfig: undefined,
      everyMs: 300_000,
      shard: { index: 2, count: 4 },
    });
    expect(parseCliArgs(["reconcile", "--all", "--shard=0/1"])).toMatchObject({
      shard: { index: 0, count: 1 },
    });
    for (const every of ["0s", "500ms", "25h", "soon", ""]) {
      expect(parseCliArgs(["reconcile", "--all", `--every=${every}`])).toEqual(
        usage(
          `--every must be a duration from 1s to 24h (how often this command runs), got ${JSON.stringify(every)}`,
        ),
      );
    }
    for (const shard of ["4/4", "1", "-1/2", "1/0", "1/1001", "a/b", "1/2/3"]) {
      expect(parseCliArgs(["reconcile", "--all", `--shard=${shard}`])).toEqual(
        usage(`--shard must be I/N with 0 <= I < N <= 1000, got ${JSON.stringify(shard)}`),
      );
    }
    expect(parseCliArgs(["reconcile", "team-a/web", "--every", "5m"])).toEqual(
      usage("--every needs --all"),
    );
    expect(parseCliArgs(["reconcile", "team-a/web", "--shard", "0/2"])).toEqual(
      usage("--shard needs --all"),
    );
    expect(parseCliArgs(["serve", "--shard", "0/2"])).toEqual(
      usage("--shard is not an option of serve"),
    );
  });

  it("refuses a port that is not an integer from 1 to 65535", () => {
    for (const port of ["abc", "0", "65536", "-1", "80.5", "1e3", " 80", "", "123456"]) {
      expect(parseCliArgs(["serve", `--port=${port}`])).toEqual(
        usage(`--port must be an integer from 1 to 65535, got ${JSON.stringify(port)}`),
      );
    }
  });

  it("refuses a target with --all, extra positionals and a bad or missing target", () => {
    expect(parseCliArgs(["reconcile", "--all", "ns/name"])).toEqual(
      usage('give NAMESPACE/NAME or --all, not both (got "ns/name")'),
    );
    expect(parseCliArgs(["reconcile", "ns/a", "ns/b"])).toEqual(
      usage('unexpected argument "ns/b"'),
    );
    expect(parseCliArgs(["reconcile", "--all", "ns/a", "ns/b"])).toEqual(
      usage('unexpected argument "ns/b"'),
    );
    expect(parseCliArgs(["serve", "now"])).toEqual(usage('unexpected argument "now"'));
    expect(parseCliArgs(["reconcile"])).toEqual(usage("expected NAME, NAMESPACE/NAME or --all"));
    for (const bad of [
      "Team/Web",
      "Web",
      "a/b/c",
      "/web",
      "team-a/",
      "x_/web",
      `a/${"w".repeat(254)}`,
    ]) {
      expect(parseCliArgs(["reconcile", bad])).toEqual(
        usage(`expected NAME or NAMESPACE/NAME, got ${JSON.stringify(bad)}`),
      );
    }
  });

  it("takes kubectl's and flux's -n/--namespace and -A/--all-namespaces", () => {
    const one = { kind: "reconcile", force: false, kubeconfig: undefined };
    expect(parseCliArgs(["reconcile", "web", "-n", "team-a"])).toEqual({
      ...one,
      namespace: "team-a",
      name: "web",
    });
    expect(parseCliArgs(["reconcile", "-n", "team-a", "web"])).toEqual(
      parseCliArgs(["reconcile", "--namespace=team-a", "web"]),
    );
    // NAME alone: the kubeconfig context's namespace, resolved when the command runs.
    expect(parseCliArgs(["reconcile", "web"])).toEqual({
      ...one,
      namespace: undefined,
      name: "web",
    });
    const all = { kind: "reconcile-all", force: false, kubeconfig: undefined };
    expect(parseCliArgs(["reconcile", "--all", "-n", "team-a"])).toEqual({
      ...all,
      namespace: "team-a",
    });
    expect(parseCliArgs(["reconcile", "--all", "-A"])).toEqual({ ...all, namespace: undefined });
    expect(parseCliArgs(["reconcile", "--all", "--all-namespaces"])).toEqual({
      ...all,
      namespace: undefined,
    });
    expect(parseCliArgs(["reconcile", "-A"])).toEqual(
      usage("-A needs --all (plumb reconcile --all reconciles the due Apps of every namespace)"),
    );
    expect(parseCliArgs(["reconcile", "--all", "-A", "-n", "x"])).toEqual(
      usage("give --namespace or -A, not both"),
    );
    expect(parseCliArgs(["reconcile", "team-a/web", "-n", "team-a"])).toEqual(
      usage("give NAMESPACE/NAME or --namespace, not both"),
    );
    expect(parseCliArgs(["reconcile", "web", "-n", "Team"])).toEqual(
      usage('--namespace must be a namespace name, got "Team"'),
    );
    expect(parseCliArgs(["serve", "-A"])).toEqual(
      usage("--all-namespaces is not an option of serve"),
    );
    expect(parseCliArgs(["serve", "-n", "x"])).toEqual(
      usage("--namespace is not an option of serve"),
    );
  });

  it("accepts --force for one App (a person's run is always full)", () => {
    expect(parseCliArgs(["reconcile", "ns/web", "--force"])).toMatchObject({
      kind: "reconcile",
      namespace: "ns",
      name: "web",
      force: true,
    });
  });

  it("refuses --namespace without --all, and options of the other command", () => {
    expect(parseCliArgs(["reconcile", "--force"])).toEqual(
      usage("expected NAME, NAMESPACE/NAME or --all"),
    );
    expect(parseCliArgs(["reconcile", "--namespace", "ns"])).toEqual(
      usage(
        "--namespace needs a NAME or --all (plumb reconcile --all -n NS reconciles the due Apps of NS)",
      ),
    );
    expect(parseCliArgs(["reconcile", "--all", "--namespace", ""])).toEqual(
      usage('--namespace must be a namespace name, got ""'),
    );
    expect(parseCliArgs(["reconcile", "ns/web", "--port", "80"])).toEqual(
      usage("--port is an option of serve"),
    );
    expect(parseCliArgs(["serve", "--all"])).toEqual(usage("--all is not an option of serve"));
    expect(parseCliArgs(["serve", "--namespace", "ns"])).toEqual(
      usage("--namespace is not an option of serve"),
    );
  });

  it("plumb diff: one App, --revision REF or --path DIR, -o json", () => {
    const diff = (over: Record<string, unknown>) => ({
      kind: "diff",
      namespace: "team-a",
      name: "web",
      revision: undefined,
      path: undefined,
      output: "text",
      kubeconfig: undefined,
      ...over,
    });
    expect(parseCliArgs(["diff", "team-a/web"])).toEqual(diff({}));
    expect(parseCliArgs(["diff", "web", "-n", "team-a", "--revision", "feature/x"])).toEqual(
      diff({ revision: "feature/x" }),
    );
    expect(parseCliArgs(["diff", "team-a/web", "--path", "./deploy", "-o", "json"])).toEqual(
      diff({ path: "./deploy", output: "json" }),
    );
    expect(parseCliArgs(["diff", "web"])).toEqual(diff({ namespace: undefined }));
    expect(parseCliArgs(["diff"])).toEqual(usage("diff needs NAME or NAMESPACE/NAME"));
    expect(parseCliArgs(["diff", "team-a/web", "--path", "d", "--revision", "main"])).toEqual(
      usage("give --revision or --path, not both"),
    );
    expect(parseCliArgs(["diff", "team-a/web", "--path", ""])).toEqual(
      usage("--path needs a directory"),
    );
    expect(parseCliArgs(["diff", "team-a/web", "-o", "yaml"])).toEqual(
      usage('-o must be json (the default is a unified diff), got "yaml"'),
    );
    expect(parseCliArgs(["diff", "-A"])).toEqual(
      usage("--all-namespaces is not an option of diff (it acts on one App)"),
    );
    expect(parseCliArgs(["diff", "team-a/web", "--force"])).toEqual(
      usage("--force is not an option of diff"),
    );
    expect(parseCliArgs(["get", "team-a/web", "--path", "d"])).toEqual(
      usage("--path is not an option of get"),
    );
    expect(parseCliArgs(["reconcile", "team-a/web", "--path", "d"])).toEqual(
      usage("--path is not an option of reconcile"),
    );
    expect(parseCliArgs(["help", "diff"])).toEqual({ kind: "help", command: "diff" });
  });

  it("refuses an unknown or missing command", () => {
    expect(parseCliArgs(["deploy", "ns/web"])).toEqual(usage('unknown command "deploy"'));
    expect(parseCliArgs([])).toEqual(usage("missing command"));
    expect(parseCliArgs(["--all"])).toEqual(usage("missing command"));
  });
});

describe("findKubeconfig", () => {
  const none = () => false;
  it("takes --kubeconfig, then $KUBECONFIG, then the client's defaults when they exist", () => {
    expect(findKubeconfig("/flag", { KUBECONFIG: "/env" }, none)).toEqual({ path: "/flag" });
    expect(findKubeconfig(undefined, { KUBECONFIG: "/env" }, none)).toEqual({ path: "/env" });
    const home = (p: string) => p === join("/home/me", ".kube", "config");
    expect(findKubeconfig(undefined, { HOME: "/home/me" }, home)).toEqual({ path: undefined });
    const pod = (p: string) => p === SERVICE_ACCOUNT_TOKEN;
    expect(findKubeconfig(undefined, { HOME: "/home/me" }, pod)).toEqual({ path: undefined });
  });

  it("says how to get one when none exists", () => {
    expect(findKubeconfig(undefined, { HOME: "/home/me", KUBECONFIG: "" }, none)).toEqual({
      error:
        "no kubeconfig: set KUBECONFIG or pass --kubeconfig (npm start runs a local control plane)",
    });
    expect(findKubeconfig(undefined, {}, none)).toEqual({ error: NO_KUBECONFIG });
  });
});

describe("singleResult", () => {
  const requests = { get: 1, list: 0, create: 0, update: 0, patch: 0, delete: 0 };
  it("fails a missing App with an error naming it", () => {
    expect(singleResult({ app: "team-a/nosuch", outcome: "NotFound", requests })).toEqual({
      line: {
        app: "team-a/nosuch",
        outcome: "NotFound",
        requests,
        error: "App team-a/nosuch not found",
      },
      code: 1,
    });
  });
  it("exits 1 on Failed, 0 otherwise", () => {
    const failed = { app: "a/b", outcome: "Failed", error: "SourceFailed: x", requests };
    expect(singleResult(failed)).toEqual({ line: failed, code: 1 });
    const ok = { app: "a/b", outcome: "Reconciled", requests };
    expect(singleResult(ok)).toEqual({ line: ok, code: 0 });
    expect(singleResult({ app: "a/b", outcome: "Finalized", requests }).code).toBe(0);
  });
});

describe("plumb CLI process (no cluster)", () => {
  const cli = resolve(import.meta.dirname, "cli.ts");
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), "plumb-cli-"));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  async function plumb(...args: string[]) {
    const env: NodeJS.ProcessEnv = { PATH: process.env["PATH"] ?? "", HOME: home };
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, ...args], {
        env,
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  it("exits 2 with usage on stderr for misuse", async () => {
    const cases: Array<[string[], string]> = [
      [["reconcile", "--bogus"], "plumb: Unknown option '--bogus'"],
      [["serve", "--port", "abc"], 'plumb: --port must be an integer from 1 to 65535, got "abc"'],
      [["serve", "--port", "70000"], "plumb: --port must be an integer from 1 to 65535"],
      [["reconcile", "--all", "ns/name"], "plumb: give NAMESPACE/NAME or --all, not both"],
      [["reconcile", "ns/a", "extra"], 'plumb: unexpected argument "extra"'],
      [["reconcile", "--force"], "plumb: expected NAME, NAMESPACE/NAME or --all"],
      [["reconcile", "-n", "ns"], "plumb: --namespace needs a NAME or --all"],
      [["frobnicate"], 'plumb: unknown command "frobnicate"'],
      [[], "plumb: missing command"],
    ];
    const runs = await Promise.all(cases.map(([args]) => plumb(...args)));
    runs.forEach((r, i) => {
      expect(r.code, cases[i]?.[0].join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.startsWith(cases[i]?.[1] ?? "?")).toBe(true);
      expect(r.stderr).toContain("usage:\n  plumb reconcile [NAMESPACE/]NAME");
    });
  });

  it("prints usage on stdout and exits 0 for --help", async () => {
    const r = await plumb("--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("usage:\n  plumb reconcile [NAMESPACE/]NAME");
    expect(r.stdout).toContain("plumb help [COMMAND]");
  });

  it("plumb help COMMAND and COMMAND --help give the command's options, environment, output and exit codes", async () => {
    const [serve, serveHelp, reconcile, rollback] = await Promise.all([
      plumb("help", "serve"),
      plumb("serve", "--help"),
      plumb("reconcile", "-h"),
      plumb("help", "rollback"),
    ]);
    expect(serve.code).toBe(0);
    expect(serveHelp.stdout).toBe(serve.stdout);
    for (const text of ["--schedule", "PLUMB_API_TOKENS", "GITHUB_WEBHOOK_SECRET", "Exit codes:"]) {
      expect(serve.stdout).toContain(text);
    }
    for (const text of ["KUBECONFIG", "PLUMB_CONCURRENCY", '"outcome"', "Exit codes: 0"]) {
      expect(reconcile.stdout).toContain(text);
    }
    expect(rollback.stdout).toContain("prefix of 7+ hex characters");
  });

  it.skipIf(existsSync(SERVICE_ACCOUNT_TOKEN))(
    "exits 1 with a JSON error when there is no kubeconfig",
    async () => {
      for (const args of [
        ["reconcile", "ns/web"],
        ["reconcile", "--all"],
      ]) {
        const r = await plumb(...args);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(JSON.parse(r.stderr)).toEqual({
          error:
            "no kubeconfig: set KUBECONFIG or pass --kubeconfig (npm start runs a local control plane)",
        });
      }
    },
  );
});
