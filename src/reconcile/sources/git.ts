// A Git repository (spec.source.git): plain manifests, a Kustomize overlay or a Helm chart at a
// path, resolved by ls-refs and fetched at the commit.
import type { AppSpec } from "../../app/index.ts";
import { err, type Issue } from "../../core/index.ts";
import { hintFits } from "../../plan/index.ts";
import { dropSkippedHooks, parseManifests } from "../../render/index.ts";
import { renderWithEngine } from "../render-source.ts";
import type { SourceKind } from "./kind.ts";

/**
 * Resolves the ref to a commit SHA (ls-refs) — or takes the revision the trigger resolved for
 * this very source (ctx.hint: same URL, ref and Secret) — and renders the path at a commit: plain
 * manifests, or a kustomization / Chart.yaml rendered by its engine (Helm hooks the App skips
 * dropped).
 */
export const git: SourceKind<"git"> = {
  name: "git",
  secretRef: (source) => source.secretRef,
  async resolve(ctx, source, auth) {
    const secret = source.secretRef ? `${ctx.ref.namespace}/${source.secretRef.name}` : undefined;
    if (ctx.hint && hintFits(ctx.hint, { url: source.url, ref: source.ref, secret })) {
      return ctx.hint.revision;
    }
    return ctx.ports.git.resolve(source, auth);
  },
  async render(ctx, spec, source, revision, auth) {
    const { git } = ctx.ports;
    const fetched = git.fetchSource
      ? await git.fetchSource(source, revision, auth, {
          valuesFiles: spec.source.helm?.valuesFiles,
        })
      : { kind: "manifests" as const, files: await git.fetch(source, revision, auth) };
    const misplaced = misplacedOptions(spec, fetched.kind);
    if (misplaced) return err([misplaced]);
    const result =
      fetched.kind === "manifests"
        ? parseManifests(fetched.files)
        : await renderWithEngine(ctx, spec, fetched);
    return result.ok ? { ok: true, value: dropSkippedHooks(result.value) } : result;
  },
};

/** spec.source.kustomize or .helm given for a path that is not a kustomization or chart. */
function misplacedOptions(
  spec: AppSpec,
  kind: "manifests" | "kustomize" | "helm",
): Issue | undefined {
  const path = "spec.source";
  if (spec.source.kustomize && kind !== "kustomize") {
    return {
      code: "RenderError",
      path,
      message: `kustomize is set, but ${spec.source.git?.path ?? "."} holds no kustomization`,
    };
  }
  if (spec.source.helm && kind !== "helm") {
    return {
      code: "RenderError",
      path,
      message: `helm is set, but ${spec.source.git?.path ?? "."} holds no Chart.yaml`,
    };
  }
  return undefined;
}
