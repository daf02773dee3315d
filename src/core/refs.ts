// Object identity helpers shared by every layer: keys, refs and how objects are named in messages.
import type { KubeObject, NamespacedName, ObjectRef } from "./object.ts";

/** The API group of an apiVersion: "apps/v1" → "apps", "v1" → "" (core). */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf("/");
  return i === -1 ? "" : apiVersion.slice(0, i);
}

/** Key for a group/version/kind: "apps/v1/Deployment", "v1/Service". */
export function gvkKey(apiVersion: string, kind: string): string {
  return `${apiVersion}/${kind}`;
}

/**
 * Identity key of an object across versions: "group/Kind/namespace/name" (Flux's inventory
 * id ignores the version the same way, so apps/v1 and apps/v1beta1 name the same object).
 */
export function refKey(ref: ObjectRef): string {
  return `${groupOf(ref.apiVersion)}/${ref.kind}/${ref.namespace ?? ""}/${ref.name}`;
}

/** The ObjectRef (inventory entry) of an object. */
export function refOf(obj: KubeObject): ObjectRef {
  const ref: ObjectRef = { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name };
  if (obj.metadata.namespace) ref.namespace = obj.metadata.namespace;
  return ref;
}

/** "Deployment team-a/web" or "Namespace team-a": how objects are named in messages. */
export function describeRef(ref: ObjectRef): string {
  return ref.namespace ? `${ref.kind} ${ref.namespace}/${ref.name}` : `${ref.kind} ${ref.name}`;
}

/** "namespace/name": how an App (or any namespaced object) is named in messages and logs. */
export function nameOf(key: NamespacedName): string {
  return `${key.namespace}/${key.name}`;
}
