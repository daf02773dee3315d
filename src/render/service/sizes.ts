// Size presets: what small, medium and large mean in requests and limits.
import type { Size } from "../../app/index.ts";

export interface ResourceList {
  cpu?: string | undefined;
  memory?: string | undefined;
}

export interface Resources {
  requests: ResourceList;
  limits: ResourceList;
}

/**
 * Requests and limits per size. Memory is limited at its request (a Pod never counts on memory
 * the node did not reserve for it, so it is not the first evicted); CPU has a request only, so a
 * busy Pod may burst instead of being throttled (Kubernetes' "Resource Management for Pods and
 * Containers"; Heroku's dynos size memory the same way).
 */
export const SIZE_PRESETS: Readonly<Record<Size, Resources>> = {
  small: { requests: { cpu: "100m", memory: "256Mi" }, limits: { memory: "256Mi" } },
  medium: { requests: { cpu: "500m", memory: "1Gi" }, limits: { memory: "1Gi" } },
  large: { requests: { cpu: "2", memory: "4Gi" }, limits: { memory: "4Gi" } },
};

/**
 * The preset of `size` with `overrides` laid over it key by key (`resources.limits.cpu: "1"`
 * adds a CPU limit; `resources.requests.memory` replaces the preset's). A memory request given
 * without a memory limit moves the limit with it (the API server refuses a request above the
 * limit). Keys stay in the order cpu, memory. Pure.
 */
export function resourcesFor(
  size: Size,
  overrides: { requests?: ResourceList | undefined; limits?: ResourceList | undefined } = {},
): Record<string, Record<string, string>> {
  const preset = SIZE_PRESETS[size];
  const merge = (base: ResourceList, over: ResourceList | undefined) => {
    const out: Record<string, string> = {};
    const cpu = over?.cpu ?? base.cpu;
    const memory = over?.memory ?? base.memory;
    if (cpu !== undefined) out["cpu"] = cpu;
    if (memory !== undefined) out["memory"] = memory;
    return out;
  };
  const limits: ResourceList = { ...overrides.limits };
  if (limits.memory === undefined && overrides.requests?.memory !== undefined)
    limits.memory = overrides.requests.memory;
  return {
    requests: merge(preset.requests, overrides.requests),
    limits: merge(preset.limits, limits),
  };
}
