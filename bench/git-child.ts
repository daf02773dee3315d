// The Git server (test/support/git-server.ts) in its own process, driven over IPC, so that
// its request handling does not share the benchmark's event loop or count towards its CPU time.
import { startGitServer, type TestRepo } from "../test/support/git-server.ts";

interface Message {
  id: number;
  op: "createRepo" | "commit" | "requests" | "requestKinds" | "stop";
  args: unknown[];
}

const server = await startGitServer();
const repos = new Map<string, TestRepo>();
const send = (m: unknown) => process.send?.(m);

process.on("message", async (m: Message) => {
  try {
    let value: unknown;
    switch (m.op) {
      case "createRepo": {
        const [name, files] = m.args as [string, Record<string, string>];
        const repo = await server.createRepo(name, files, { allowSha1InWant: true });
        repos.set(name, repo);
        value = { url: repo.url, head: await repo.head() };
        break;
      }
      case "commit": {
        const [name, files] = m.args as [string, Record<string, string | null>];
        const repo = repos.get(name);
        if (!repo) throw new Error(`no repo ${name}`);
        value = await repo.commit(files);
        break;
      }
      case "requests":
        value = server.requests.length;
        break;
      case "requestKinds": {
        // A POST to git-upload-pack is a fetch (protocol v1, a pack) or, with Git-Protocol
        // version=2, an ls-refs; GETs are the ref advertisements before either.
        const kinds = { fetch: 0, lsRefs: 0, other: 0 };
        server.requests.forEach((r, i) => {
          if (!r.startsWith("POST ") || !r.includes("git-upload-pack")) kinds.other++;
          else if (server.protocols[i]?.includes("version=2")) kinds.lsRefs++;
          else kinds.fetch++;
        });
        value = kinds;
        break;
      }
      case "stop":
        await server.stop();
        send({ id: m.id, ok: true });
        process.disconnect?.();
        return;
    }
    send({ id: m.id, ok: true, value });
  } catch (err) {
    send({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
});
send({ ready: true, url: server.url });
// Exit with the parent.
process.on("disconnect", () => process.exit(0));
