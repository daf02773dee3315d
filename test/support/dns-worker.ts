// A Worker that drives the Cloudflare DNS adapter once per request (test/e2e/dns-workerd.test.ts):
// proof that the `cloudflare` client runs in workerd, not only in Node.
import { createCloudflareDns } from "../../src/dns/cloudflare.ts";

export default {
  async fetch(_req: Request, env: Record<string, string>): Promise<Response> {
    const dns = createCloudflareDns({
      apiToken: env["TOKEN"] ?? "",
      zoneId: env["ZONE"] ?? "",
      baseURL: env["BASE"] ?? "",
    });
    const comment = "managed-by=plumb app=team-a/workerd";
    try {
      const created = await dns.create({
        name: "workerd.example.com",
        type: "A",
        content: "203.0.113.9",
        comment,
      });
      const listed = await dns.listByComment(comment);
      await dns.delete(created.id);
      return Response.json({ created, listed });
    } catch (err) {
      return Response.json({ error: String(err) }, { status: 500 });
    }
  },
};
