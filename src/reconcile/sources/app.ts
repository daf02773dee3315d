// An application from a short service spec (spec.source.app): pin each image the spec names (a
// tag, or the highest tag a semver range matches) and render a revision's pins with the service
// renderer.
import type { AppSource } from "../../app/index.ts";
import { type Issue, type Result, SourceError } from "../../core/index.ts";
import {
  formatRevision,
  givenPin,
  type ImagePin,
  imageRequests,
  type ParsedObject,
  parseRevision,
  renderApp,
} from "../../render/index.ts";
import type { RunContext } from "../context.ts";
import type { SourceAuth } from "../ports.ts";
import type { SourceKind } from "./kind.ts";

/**
 * The revision of an app source now: every distinct image of its services and jobs pinned
 * (ImagePort.pin, one registry session each; an image whose digest the spec gives is pinned
 * as it is, with no lookup), as "<repository>:<tag>@<digest>,…". A new tag
 * matching a range, or a tag moved to another digest, is a new revision. Throws SourceError.
 */
export async function resolveAppRevision(
  ctx: RunContext,
  source: AppSource,
  auth: SourceAuth | undefined,
): Promise<string> {
  const pins: ImagePin[] = [];
  for (const request of imageRequests(source)) {
    const given = givenPin(request);
    if (given) {
      pins.push(given);
      continue;
    }
    const image = ctx.ports.image;
    if (!image) throw new SourceError("image sources are not configured in this runtime", false);
    const pin = await image.pin(request.repository, request.tag, auth);
    pins.push({ repository: request.repository, tag: pin.tag, digest: pin.digest });
  }
  return formatRevision(pins);
}

/**
 * The objects of an app source at `revision`: its pins (parseRevision) rendered with the
 * cluster's ingress settings. An image the revision does not pin is a RenderError issue.
 */
export function renderAppRevision(
  ctx: RunContext,
  source: AppSource,
  revision: string,
): Result<ParsedObject[], Issue[]> {
  return renderApp({
    app: ctx.app.metadata.name,
    source,
    pins: parseRevision(revision) ?? [],
    settings: ctx.ports.ingress ?? {},
  });
}

/** spec.source.app: resolved to its image pins, rendered from them. */
export const app: SourceKind<"app"> = {
  name: "app",
  secretRef: (source) => source.secretRef,
  resolve: resolveAppRevision,
  async render(ctx, _spec, source, revision) {
    return renderAppRevision(ctx, source, revision);
  },
};
