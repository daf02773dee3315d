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
const IMAGE = "spec.template.spec.containers[name=web].image";
const PREVIEW: ResourceStatus[] = [
  r("Service", "web", "will be created"),
  {
    ...r("Deployment", "web", `will change: spec.replicas, ${IMAGE}`),
    changes: [
      { path: "spec.replicas", desired: "3", live: "2", manager: "kubectl-scale" },
      { path: IMAGE, desired: "web:v6", live: "web:v5" },
    ],
  },
  { ...r("Secret", "env", "will change: data.TOKEN"), changes: [{ path: "data.TOKEN" }] },
  r("ConfigMap", "old", "will be pruned"),
  r(
    "Job",
    "migrate",
    'will fail: Job.batch "migrate" is invalid: spec.template: field is immutable',
  ),
  r("Secret", "same"),
];
const ref = (kind: string, name: string) => ({ apiVersion: "v1", kind, namespace: "team-a", name });

describe("previewOf", () => {
  it("reads create, change (with fields and values), prune and fail from status.resources", () => {
    expect(previewOf(PREVIEW)).toEqual({
      create: [ref("Service", "web")],
      change: [
        {
          ...ref("Deployment", "web"),
          fields: ["spec.replicas", IMAGE],
          changes: PREVIEW[1]!.changes,
        },
        { ...ref("Secret", "env"), fields: ["data.TOKEN"], changes: [{ path: "data.TOKEN" }] },
      ],
      prune: [ref("ConfigMap", "old")],
      fail: [
        {
          ...ref("Job", "migrate"),
          message: 'Job.batch "migrate" is invalid: spec.template: field is immutable',
        },
      ],
    });
    expect(previewOf(undefined)).toEqual({ create: [], change: [], prune: [], fail: [] });
  });

  it("a line written without values still lists its paths", () => {
    expect(previewOf([r("Deployment", "web", "will change: spec.replicas")]).change).toEqual([
      {
        ...ref("Deployment", "web"),
        fields: ["spec.replicas"],
        changes: [{ path: "spec.replicas" }],
      },
    ]);
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
      [
        "*Will change*",
        "• Deployment team-a/web",
        "    `spec.replicas`: `2` → `3`",
        "    `spec.template.spec.containers[name=web].image`: `web:v5` → `web:v6`",
        "• Secret team-a/env",
        "    `data.TOKEN`: `(hidden)` → `(hidden)`",
      ].join("\n"),
      "*Will prune*\n• ConfigMap team-a/old",
      '*Will fail*\n• Job team-a/migrate: Job.batch "migrate" is invalid: spec.template: field is immutable',
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

  it("lists at most 5 fields per object, escapes values and keeps code spans whole", () => {
    const changes = Array.from({ length: 7 }, (_, i) => ({
      path: `data.k${i}`,
      desired: i === 0 ? "<b>`x`</b> & y" : `${i}`,
      ...(i === 1 ? {} : { live: "old" }),
    }));
    changes.push({ path: "data.gone", live: "was" } as (typeof changes)[number]);
    const msg = slackMessage(APP, {
      event: "Held",
      message: "held",
      held: {
        revision: REV,
        preview: [{ ...r("ConfigMap", "settings", "will change: data.k0"), changes }],
      },
    }) as { blocks: Array<{ text?: { text: string } }> };
    expect(msg.blocks[1]?.text?.text).toBe(
      [
        "*Will change*",
        "• ConfigMap team-a/settings",
        "    `data.k0`: `old` → `&lt;b&gt;'x'&lt;/b&gt; &amp; y`",
        "    `data.k1`: `(unset)` → `1`",
        "    `data.k2`: `old` → `2`",
        "    `data.k3`: `old` → `3`",
        "    `data.k4`: `old` → `4`",
        "    … and 3 more fields",
      ].join("\n"),
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
