// The headers between the main Worker (binding.ts) and the render Worker
// (functions/render-worker.ts), in a module of their own so the render Worker imports nothing
// else of plumb's.

/**
 * Sent with a render by a caller that loads the engine apart: an isolate whose engine is not
 * loaded then answers 503 with COLD_HEADER instead of loading it inside the render's time
 * limit (without it, the render Worker loads and renders in one request).
 */
export const LOAD_APART_HEADER = "x-plumb-engine-load";
/** On a 503 from an isolate whose engine is not loaded: POST /load first. */
export const COLD_HEADER = "x-plumb-engine-cold";
