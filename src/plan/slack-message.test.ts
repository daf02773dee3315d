import { describe, expect, it } from "vitest";
import type { ResourceStatus } from "../app/index.ts";
import { previewOf } from "./preview.ts";
import { SLACK_APPROVE, SLACK_REJECT, slackMessage } from "./slack-message.ts";

const APP = { metadata: { namespace: "team-a", name: "web" } };
const REV = "0123456789abcdef0123456789abcdef01234567";
const r = (kind: string, name: string, message?: string): ResourceStatus => ({
  apiVersion: "v1",
  kind,
  namespace: "team-a",
  name,
  status: message ? "OutOfSync" : "Synced",
  ...(message ? { message } : {}),
});
const PREVIEW = [
  r("Service", "web", "will be created"),
  r("Deployment", "web", "will change: spec.replicas, spec.template.spec.containers[0].image"),
  r("ConfigMap", "old", "will be pruned"),
  r("Secret", "same"),
];

describe("previewOf", () => {
  it("reads create, change (with fields) and prune from status.resources", () => {
    expect(previewOf(PREVIEW)).toEqual({
      create: [{ apiVersion: "v1", kind: "Service", namespace: "team-a", name: "web" }],
      change: [
        {
          apiVersion: "v1",
          kind: "Deployment",
          namespace: "team-a",
          name: "web",
          fields: ["spec.replicas", "spec.template.spec.containers[0].image"],
        },
      ],
      prune: [{ apiVersion: "v1", kind: "ConfigMap", namespace: "team-a", name: "old" }],
    });
    expect(previewOf(undefined)).toEqual({ create: [], change: [], prune: [] });
  });
});

describe("slackMessage", () => {
  it("keeps the plain alert for other transitions", () => {
    expect(
      slackMessage(APP, { event: "Synced", message: "applied revision 0123456" }, "#d"),
    ).toEqual({
      text: "[team-a/web] Synced: applied revision 0123456",
      channel: "#d",
      blocks: [
        {
          type: "section",
          text: { type: "mrkdwn", text: "*team-a/web* — *Synced*\napplied revision 0123456" },
        },
      ],
    });
  });

  it("a Held alert lists the preview and carries Approve and Reject buttons for that revision", () => {
    const msg = slackMessage(APP, {
      event: "Held",
      message: "revision 0123456 is waiting for approval",
      held: { revision: REV, preview: PREVIEW },
    }) as { text: string; blocks: Array<Record<string, unknown>> };
    expect(msg.text).toBe("[team-a/web] Held: revision 0123456 is waiting for approval");
    const texts = msg.blocks
      .filter((b) => b["type"] === "section")
      .map((b) => (b["text"] as { text: string }).text);
    expect(texts.slice(1)).toEqual([
      "*Will create*\n• Service team-a/web",
      "*Will change*\n• Deployment team-a/web: spec.replicas, spec.template.spec.containers[0].image",
      "*Will prune*\n• ConfigMap team-a/old",
    ]);
    const actions = msg.blocks.at(-1) as { type: string; elements: Array<Record<string, unknown>> };
    expect(actions.type).toBe("actions");
    expect(actions.elements.map((e) => [e["action_id"], JSON.parse(e["value"] as string)])).toEqual(
      [
        [SLACK_APPROVE, { namespace: "team-a", name: "web", revision: REV }],
        [SLACK_REJECT, { namespace: "team-a", name: "web", revision: REV }],
      ],
    );
  });

  it("escapes mrkdwn control characters and caps long lists", () => {
    const many = Array.from({ length: 20 }, (_, i) => r("ConfigMap", `c${i}`, "will be created"));
    const msg = slackMessage(APP, {
      event: "Held",
      message: "a <b> & c",
      held: { revision: REV, preview: [...many, r("X", "<!channel>", "will be pruned")] },
    }) as { blocks: Array<{ text?: { text: string } }> };
    expect(msg.blocks[0]?.text?.text).toBe("*team-a/web* — *Held*\na &lt;b&gt; &amp; c");
    expect(msg.blocks[1]?.text?.text.split("\n")).toHaveLength(17);
    expect(msg.blocks[1]?.text?.text).toContain("… and 5 more");
    expect(msg.blocks[2]?.text?.text).toBe("*Will prune*\n• X team-a/&lt;!channel&gt;");
  });
});
