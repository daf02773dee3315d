// A container image (spec.source.image): its tag resolved to a digest, rendered to a
// Deployment, a Service and an optional Ingress.
import { SourceError } from "../../core/index.ts";
import { renderImage } from "../../render/index.ts";
import type { SourceKind } from "./kind.ts";

export const image: SourceKind<"image"> = {
  name: "image",
  secretRef: (source) => source.secretRef,
  resolve(ctx, source, auth) {
    if (!ctx.ports.image) {
      throw new SourceError("image sources are not configured in this runtime", false);
    }
    return ctx.ports.image.resolve(source, auth);
  },
  async render(ctx, _spec, source, revision) {
    return { ok: true, value: renderImage(ctx.app.metadata.name, source, revision) };
  },
};
