// The notify port over real HTTP: a redirect is refused, so a token header stays with its host.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNotifier } from "./http.ts";

let elsewhere: Server;
let redirecting: Server;
const reached: Array<Record<string, unknown>> = [];
let elsewhereUrl = "";
let redirectingUrl = "";

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  elsewhere = createServer((req, res) => {
    reached.push({ ...req.headers });
    res.end("ok");
  });
  elsewhereUrl = await listen(elsewhere);
  redirecting = createServer((req, res) => {
    req.resume();
    if (req.url === "/gitlab") {
      res.writeHead(400, { "content-type": "application/json" });
      res.end('{"message":"Cannot transition status via :enqueue from :pending"}');
      return;
    }
    res.writeHead(req.url === "/ok" ? 201 : 307, { location: `${elsewhereUrl}/steal` }).end();
  });
  redirectingUrl = await listen(redirecting);
});
afterAll(async () => {
  await new Promise((r) => elsewhere.close(r));
  await new Promise((r) => redirecting.close(r));
});

describe("createNotifier", () => {
  it("does not follow a redirect: the request fails with its status, the token goes nowhere", async () => {
    const notify = createNotifier();
    const sent = notify.post(`${redirectingUrl}/statuses`, "{}", {
      "content-type": "application/json",
      "private-token": "XXXXtokenXXXX",
    });
    await expect(sent).rejects.toMatchObject({
      status: 307,
      message: "the target answered HTTP 307",
    });
    expect(reached).toEqual([]);
  });

  it("resolves on a 2xx", async () => {
    await expect(createNotifier().post(`${redirectingUrl}/ok`, "{}", {})).resolves.toBeUndefined();
  });

  it("counts a refusal as done only when `settled` accepts its status and answer", async () => {
    const notify = createNotifier();
    const seen: Array<[number, string]> = [];
    const settled = (status: number, answer: string) => {
      seen.push([status, answer]);
      return answer.includes("Cannot transition status");
    };
    await expect(
      notify.post(`${redirectingUrl}/gitlab`, "{}", {}, { settled }),
    ).resolves.toBeUndefined();
    expect(seen).toEqual([
      [400, '{"message":"Cannot transition status via :enqueue from :pending"}'],
    ]);
    await expect(notify.post(`${redirectingUrl}/gitlab`, "{}", {})).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      notify.post(`${redirectingUrl}/other`, "{}", {}, { settled }),
    ).rejects.toMatchObject({ status: 307 });
  });
});
