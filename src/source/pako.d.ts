// The part of pako 1.x (the inflater isomorphic-git uses; it ships no types) that
// pack-scan.ts calls: a streaming Inflate whose onData and onEnd are replaced.
declare module "pako" {
  export class Inflate {
    constructor(options?: { chunkSize?: number });
    push(data: Uint8Array, mode: boolean): boolean;
  }
  const pako: { Inflate: typeof Inflate };
  export default pako;
}
