import { describe, expect, it } from "vitest";
import type { KubeObject, ObjectRef } from "../core/index.ts";
import { refKey } from "../core/index.ts";
import { assessSet, type SetHealth } from "./assess.ts";

const now = new Date("2026-11-29T12:00:00.000Z");
const cm: ObjectRef = { apiVersion: "v1", kind: "ConfigMap", namespace: "team-a", name: "cfg" };
const web: ObjectRef = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  namespace: "team-a",
  name: "web",
};
const liveCm: KubeObject = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "cfg", namespace: "team-a" },
};
const deleting: KubeObject = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "team-a", deletionTimestamp: "2026-11-29T11:59:00Z" },
};
const live = (...objects: Array<[ObjectRef, KubeObject]>) =>
  new Map(objects.map(([r, o]) => [refKey(r), o]));

describe("assessSet", () => {
  it.each<[string, ObjectRef[], Map<string, KubeObject>, SetHealth]>([
    [
      "no objects: Healthy",
      [],
      live(),
      { byKey: new Map(), status: "Healthy", reason: "no objects" },
    ],
    [
      "every object healthy",
      [cm],
      live([cm, liveCm]),
      {
        byKey: new Map([[refKey(cm), { status: "Healthy" }]]),
        status: "Healthy",
        reason: "1 object healthy",
      },
    ],
    [
      "an object absent from the live set is Missing, and names the aggregate",
      [cm, web],
      live([cm, liveCm]),
      {
        byKey: new Map([
          [refKey(cm), { status: "Healthy" }],
          [refKey(web), { status: "Missing", message: "not found" }],
        ]),
        status: "Missing",
        reason: "Deployment team-a/web: not found",
      },
    ],
    [
      "the worst object wins: Missing over Progressing",
      [web, cm],
      live([web, deleting]),
      {
        byKey: new Map([
          [refKey(web), { status: "Progressing", message: "being deleted" }],
          [refKey(cm), { status: "Missing", message: "not found" }],
        ]),
        status: "Missing",
        reason: "ConfigMap team-a/cfg: not found",
      },
    ],
    [
      "live objects outside the set are not assessed",
      [web],
      live([web, deleting], [cm, liveCm]),
      {
        byKey: new Map([[refKey(web), { status: "Progressing", message: "being deleted" }]]),
        status: "Progressing",
        reason: "Deployment team-a/web: being deleted",
      },
    ],
  ])("%s", (_name, refs, objects, expected) => {
    expect(assessSet(refs, objects, now)).toEqual(expected);
  });
});
