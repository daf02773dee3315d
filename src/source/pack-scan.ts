// Checks the size of every object of a Git pack while it streams in, before isomorphic-git
// indexes it: indexing inflates each object whole (and copies it to hash it), so one 200 MB
// compressible blob costs several times that in memory, even when no App reads it. Each
// object is inflated here in 16 KiB pieces that are counted and dropped, so the scan itself
// holds almost nothing.
// Formats: git Documentation/gitformat-pack.txt (pack entries, "Deltified representation")
// and gitprotocol-pack.txt (pkt-lines, side-band-64k). pako is the inflater isomorphic-git
// itself uses (pure JavaScript: runs in workerd too).
import pako from "pako";

/** A pack holds an object over the cap: its type and size (declared or inflated so far). */
export class PackObjectTooLarge extends Error {
  readonly type: string;
  readonly bytes: number;
  readonly cap: number;
  constructor(type: string, bytes: number, cap: number) {
    super(
      `a pack object (${type}) of at least ${bytes} bytes once inflated is over the ${cap}-byte cap`,
    );
    this.name = "PackObjectTooLarge";
    this.type = type;
    this.bytes = bytes;
    this.cap = cap;
  }
}

const TYPES: Record<number, string> = {
  1: "commit",
  2: "tree",
  3: "blob",
  4: "tag",
  6: "ofs-delta",
  7: "ref-delta",
};

type Inflater = {
  push(data: Uint8Array, mode: boolean): boolean;
  onData: (chunk: Uint8Array) => void;
  onEnd: (status: number) => void;
  ended: boolean;
  err: number;
  msg: string;
  strm: { avail_in: number };
};

/**
 * A streaming reader of one pack (`PACK`, version, count, entries, trailer) that refuses an
 * object whose size once inflated is over `maxObjectBytes`: for a whole object as its entry
 * header declares it, before any of it is inflated; for a delta the result size its first
 * inflated bytes declare; for either, what it really inflates to, counted as it goes (a header
 * that lies is caught too). push() throws PackObjectTooLarge; a pack that is malformed is left
 * for isomorphic-git to refuse (the scan stops reading it).
 */
export class PackScanner {
  private state: "head" | "entry" | "base" | "deflate" | "done" = "head";
  private head: number[] = [];
  private left = 0;
  private type = 0;
  private size = 0;
  private shift = 0;
  private baseBytes = 0;
  private inflater: Inflater | undefined;
  private inflated = 0;
  private deltaHead: number[] | undefined;
  /** Objects fully read so far. */
  objects = 0;
  /** The largest object seen so far, bytes once inflated. */
  largest = 0;

  private readonly maxObjectBytes: number;

  /** @param maxObjectBytes the cap on one object once inflated, bytes */
  constructor(maxObjectBytes: number) {
    this.maxObjectBytes = maxObjectBytes;
  }

  /** Reads the next bytes of the pack. @throws PackObjectTooLarge */
  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length && this.state !== "done") {
      if (this.state === "head") {
        this.head.push(chunk[at++] as number);
        if (this.head.length < 12) continue;
        const [p, a, c, k] = this.head;
        if (p !== 0x50 || a !== 0x41 || c !== 0x43 || k !== 0x4b) {
          this.state = "done";
          break;
        }
        this.left = this.head.slice(8, 12).reduce((n, b) => n * 256 + b, 0);
        this.state = this.left > 0 ? "entry" : "done";
        this.startEntry();
      } else if (this.state === "entry") {
        const b = chunk[at++] as number;
        if (this.shift === 0) {
          this.type = (b >> 4) & 7;
          this.size = b & 0x0f;
          this.shift = 4;
        } else {
          this.size += (b & 0x7f) * 2 ** this.shift;
          this.shift += 7;
        }
        if (b & 0x80) continue;
        if (this.type !== 6 && this.type !== 7) this.check(this.size);
        // OFS_DELTA: a varint offset to the base; REF_DELTA: the base's 20-byte name.
        this.baseBytes = this.type === 7 ? 20 : 0;
        this.state = this.type === 6 || this.type === 7 ? "base" : "deflate";
        if (this.state === "deflate") this.startInflate();
      } else if (this.state === "base") {
        const b = chunk[at++] as number;
        const more = this.type === 6 ? (b & 0x80) !== 0 : --this.baseBytes > 0;
        if (!more) {
          this.state = "deflate";
          this.startInflate();
        }
      } else {
        const inflater = this.inflater as Inflater;
        const part = chunk.subarray(at);
        inflater.push(part, false);
        if (!inflater.ended) {
          at = chunk.length;
          continue;
        }
        if (inflater.err !== 0) {
          this.state = "done";
          break;
        }
        at += part.length - inflater.strm.avail_in;
        this.largest = Math.max(this.largest, this.inflated);
        this.objects++;
        this.inflater = undefined;
        this.state = --this.left > 0 ? "entry" : "done";
        this.startEntry();
      }
    }
  }

  private startEntry(): void {
    this.type = 0;
    this.size = 0;
    this.shift = 0;
  }

  private startInflate(): void {
    const inflater = new pako.Inflate() as unknown as Inflater;
    this.inflated = 0;
    this.deltaHead = this.type === 6 || this.type === 7 ? [] : undefined;
    inflater.onData = (data) => {
      this.inflated += data.byteLength;
      this.check(this.inflated);
      const head = this.deltaHead;
      if (head === undefined) return;
      for (let i = 0; i < data.length && head.length < 20; i++) head.push(data[i] as number);
      const result = deltaResultSize(head);
      if (result !== undefined) {
        this.deltaHead = undefined;
        this.check(result);
      }
    };
    inflater.onEnd = (status) => {
      inflater.err = status;
    };
    this.inflater = inflater;
  }

  private check(bytes: number): void {
    if (bytes > this.maxObjectBytes) {
      this.state = "done";
      throw new PackObjectTooLarge(TYPES[this.type] ?? "object", bytes, this.maxObjectBytes);
    }
  }
}

/** The result size of a delta from its first bytes (two varints: base size, result size). */
function deltaResultSize(head: readonly number[]): number | undefined {
  let i = 0;
  const varint = (): number | undefined => {
    let value = 0;
    let shift = 0;
    while (i < head.length) {
      const b = head[i++] as number;
      value += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if ((b & 0x80) === 0) return value;
    }
    return undefined;
  };
  return varint() === undefined ? undefined : varint();
}

/**
 * A reader of an upload-pack response body (as isomorphic-git fetches it: pkt-lines, then the
 * pack in side-band channel 1; a server without side-band sends the pack raw after its last
 * line) that hands every pack byte to `pack` as it arrives. Progress and error channels and the
 * protocol's own lines are skipped.
 */
export function uploadPackReader(pack: (bytes: Uint8Array) => void): (chunk: Uint8Array) => void {
  let raw = false;
  let pending = new Uint8Array(0);
  return (chunk) => {
    if (raw) {
      pack(chunk);
      return;
    }
    let data = chunk;
    if (pending.length > 0) {
      data = new Uint8Array(pending.length + chunk.length);
      data.set(pending);
      data.set(chunk, pending.length);
    }
    let at = 0;
    while (data.length - at >= 4) {
      const text = String.fromCharCode(...data.subarray(at, at + 4));
      if (!/^[0-9a-f]{4}$/i.test(text)) {
        // No side-band: the rest is the pack itself ("PACK...").
        raw = true;
        pack(data.subarray(at));
        pending = new Uint8Array(0);
        return;
      }
      const length = Number.parseInt(text, 16);
      if (length < 4) {
        at += 4; // flush, delimiter or response-end packet
        continue;
      }
      if (data.length - at < length) break;
      if (data[at + 4] === 1) pack(data.subarray(at + 5, at + length));
      at += length;
    }
    pending = data.slice(at);
  };
}
