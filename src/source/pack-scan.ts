// Checks the size of every object of a Git pack while it streams in, before isomorphic-git
// indexes it: indexing inflates each object whole (and copies it to hash it), so one 200 MB
// compressible blob costs several times that in memory, even when no App reads it. Each
// object is inflated here in 16 KiB pieces that are counted and dropped, so the scan itself
// holds almost nothing.
// Formats: git Documentation/gitformat-pack.txt (pack entries, "Deltified representation")
// and gitprotocol-pack.txt (pkt-lines, side-band-64k). pako is the inflater isomorphic-git
// itself uses (pure JavaScript: runs in workerd too).
import { createHash } from "node:crypto";
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

/** An object of a pack left out of its index (PackScanner's `skip` mode). */
export interface SkippedObject {
  /** The object's id (a whole blob; undefined for a delta, whose id needs its base). */
  oid: string | undefined;
  /** "blob", "ofs-delta" or "ref-delta". */
  type: string;
  /** Its size once inflated (a delta: its result's), bytes. */
  bytes: number;
  /** The base it was a delta of was skipped: its size is what its delta declares. */
  baseSkipped: boolean;
}

/** Options of a PackScanner beyond the cap. */
export interface PackScanOptions {
  /**
   * Receives the pack as it is read, bytes in order. With `skip`, an object over the cap is
   * replaced by a placeholder (below); the pack's trailing checksum is then recomputed.
   */
  out?: (bytes: Uint8Array) => void;
  /**
   * Skip, rather than refuse, a blob over the cap, a delta whose result is over it, and a delta
   * whose base was skipped: each is replaced in `out` by a blob of 1 to 5 zero bytes whose entry
   * takes exactly the bytes the object took, so every other entry keeps its offset (offset
   * deltas stay valid) and nothing over the cap is ever inflated whole. The skipped objects are
   * in `skipped`; a reader that needs one finds it missing and names it (skipped.ts). Requires
   * `out`. Commits, trees and tags over the cap are still refused.
   */
  skip?: boolean;
}

/**
 * A streaming reader of one pack (`PACK`, version, count, entries, trailer) that refuses an
 * object whose size once inflated is over `maxObjectBytes`: for a whole object as its entry
 * header declares it, before any of it is inflated; for a delta the result size its first
 * inflated bytes declare; for either, what it really inflates to, counted as it goes (a header
 * that lies is caught too). push() throws PackObjectTooLarge; a pack that is malformed is left
 * for isomorphic-git to refuse (the scan stops reading it). With `skip` such objects are left
 * out instead (PackScanOptions).
 */
export class PackScanner {
  private state: "head" | "entry" | "base" | "deflate" | "trailer" | "done" = "head";
  private head: number[] = [];
  private left = 0;
  private type = 0;
  private size = 0;
  private shift = 0;
  private baseBytes = 0;
  private baseValue = 0;
  private baseName: number[] = [];
  private inflater: Inflater | undefined;
  private inflated = 0;
  private deltaHead: number[] | undefined;
  /** Pack offset of the next byte read. */
  private at = 0;
  /** Pack offset where the current entry starts, and its header's length (type, size, base). */
  private entryStart = 0;
  private headerBytes = 0;
  /** The current entry: passed on, skipped, or not decided yet (its bytes held). */
  private decision: "pass" | "skip" | undefined;
  private held: Uint8Array[] = [];
  private hash: ReturnType<typeof createHash> | undefined;
  private blobHash: ReturnType<typeof createHash> | undefined;
  private baseWasSkipped = false;
  private result: number | undefined;
  private readonly skippedOffsets = new Set<number>();
  private readonly skippedOids = new Set<string>();
  private trailer: number[] = [];
  /** Objects fully read so far. */
  objects = 0;
  /** The largest object seen so far, bytes once inflated. */
  largest = 0;
  /** Objects left out (skip mode), in pack order. */
  readonly skipped: SkippedObject[] = [];

  private readonly maxObjectBytes: number;
  private readonly out: ((bytes: Uint8Array) => void) | undefined;
  private readonly skip: boolean;

  /** @param maxObjectBytes the cap on one object once inflated, bytes */
  constructor(maxObjectBytes: number, options: PackScanOptions = {}) {
    this.maxObjectBytes = maxObjectBytes;
    this.out = options.out;
    this.skip = options.skip === true && options.out !== undefined;
    if (this.skip) this.hash = createHash("sha1");
  }

  /** Reads the next bytes of the pack. @throws PackObjectTooLarge */
  push(chunk: Uint8Array): void {
    let at = 0;
    // Bytes of `chunk` from `from` on that belong to the current state and are not out yet.
    let from = 0;
    const flushTo = (to: number) => {
      if (to > from) this.emitEntryBytes(chunk.subarray(from, to));
      from = to;
    };
    while (at < chunk.length && this.state !== "done") {
      if (this.state === "head") {
        this.head.push(chunk[at++] as number);
        this.at++;
        if (this.head.length < 12) continue;
        this.emit(chunk.subarray(from, at));
        from = at;
        const [p, a, c, k] = this.head;
        if (p !== 0x50 || a !== 0x41 || c !== 0x43 || k !== 0x4b) {
          this.state = "done";
          break;
        }
        this.left = this.head.slice(8, 12).reduce((n, b) => n * 256 + b, 0);
        this.state = this.left > 0 ? "entry" : "trailer";
        this.startEntry();
      } else if (this.state === "entry") {
        const b = chunk[at++] as number;
        this.at++;
        if (this.shift === 0) {
          this.type = (b >> 4) & 7;
          this.size = b & 0x0f;
          this.shift = 4;
        } else {
          this.size += (b & 0x7f) * 2 ** this.shift;
          this.shift += 7;
        }
        if (b & 0x80) continue;
        const whole = this.type !== 6 && this.type !== 7;
        if (whole) {
          if (this.size > this.maxObjectBytes && this.skip && this.type === 3) {
            flushTo(at);
            this.decide("skip");
          } else {
            this.check(this.size);
            flushTo(at);
            this.decide("pass");
          }
        }
        // OFS_DELTA: a varint offset to the base; REF_DELTA: the base's 20-byte name.
        this.baseBytes = this.type === 7 ? 20 : 0;
        this.baseValue = 0;
        this.baseName = [];
        this.state = whole ? "deflate" : "base";
        if (this.state === "deflate") this.startInflate();
      } else if (this.state === "base") {
        const b = chunk[at++] as number;
        this.at++;
        let more: boolean;
        if (this.type === 6) {
          // gitformat-pack: n bytes of 7 bits, each byte past the first adding 2^(7i).
          this.baseValue =
            this.baseBytes++ === 0 ? b & 0x7f : (this.baseValue + 1) * 128 + (b & 0x7f);
          more = (b & 0x80) !== 0;
        } else {
          this.baseName.push(b);
          more = --this.baseBytes > 0;
        }
        if (!more) {
          this.baseWasSkipped =
            this.type === 6
              ? this.skippedOffsets.has(this.entryStart - this.baseValue)
              : this.skippedOids.has(hex(this.baseName));
          this.state = "deflate";
          this.headerBytes = this.at - this.entryStart;
          flushTo(at);
          if (this.baseWasSkipped) this.decide("skip");
          this.startInflate();
        }
      } else if (this.state === "deflate") {
        const inflater = this.inflater as Inflater;
        const part = chunk.subarray(at);
        inflater.push(part, false);
        if (!inflater.ended) {
          this.at += part.length;
          at = chunk.length;
          flushTo(at);
          continue;
        }
        if (inflater.err !== 0) {
          this.state = "done";
          break;
        }
        const used = part.length - inflater.strm.avail_in;
        at += used;
        this.at += used;
        flushTo(at);
        this.endEntry();
        this.inflater = undefined;
        this.state = --this.left > 0 ? "entry" : "trailer";
        this.startEntry();
      } else {
        // The trailer: the SHA-1 of the pack before it, recomputed when an object was replaced.
        this.trailer.push(chunk[at++] as number);
        this.at++;
        from = at;
        if (this.trailer.length < 20) continue;
        this.state = "done";
        const trailer =
          this.skipped.length > 0 && this.hash
            ? new Uint8Array(this.hash.digest())
            : Uint8Array.from(this.trailer);
        this.out?.(trailer);
      }
    }
    if (this.state === "done") {
      // A malformed pack (or bytes after its trailer): handed on as it came, for
      // isomorphic-git to refuse.
      const held = this.held;
      this.held = [];
      for (const h of held) this.emit(h);
      this.emit(chunk.subarray(from));
    } else flushTo(chunk.length);
  }

  /** Hands `bytes` on (and into the recomputed checksum). */
  private emit(bytes: Uint8Array): void {
    if (bytes.length === 0 || !this.out) return;
    const copy = bytes.slice();
    this.hash?.update(copy);
    this.out(copy);
  }

  /** Bytes of the current entry: out when it passes, held while undecided, dropped when skipped. */
  private emitEntryBytes(bytes: Uint8Array): void {
    if (this.state === "head" || this.state === "trailer" || this.decision === "pass") {
      this.emit(bytes);
    } else if (this.decision === undefined && this.out) this.held.push(bytes.slice());
  }

  private decide(decision: "pass" | "skip"): void {
    if (this.decision !== undefined) return;
    this.decision = decision;
    const held = this.held;
    this.held = [];
    if (decision === "pass") for (const h of held) this.emit(h);
  }

  private startEntry(): void {
    this.type = 0;
    this.size = 0;
    this.shift = 0;
    this.entryStart = this.at;
    this.headerBytes = 0;
    this.decision = undefined;
    this.held = [];
    this.baseWasSkipped = false;
    this.result = undefined;
    this.blobHash = undefined;
  }

  private startInflate(): void {
    const inflater = new pako.Inflate() as unknown as Inflater;
    if (this.headerBytes === 0) this.headerBytes = this.at - this.entryStart;
    this.inflated = 0;
    const delta = this.type === 6 || this.type === 7;
    this.deltaHead = delta ? [] : undefined;
    if (this.decision === "skip" && !delta) {
      // The skipped blob's id, so a reader can name the file it is.
      this.blobHash = createHash("sha1");
      this.blobHash.update(`blob ${this.size}\0`);
    }
    inflater.onData = (data) => {
      this.inflated += data.byteLength;
      this.blobHash?.update(data);
      if (this.decision !== "skip") this.check(this.inflated);
      const head = this.deltaHead;
      if (head === undefined) return;
      for (let i = 0; i < data.length && head.length < 20; i++) head.push(data[i] as number);
      const result = deltaResultSize(head);
      if (result !== undefined) {
        this.deltaHead = undefined;
        this.result = result;
        if (result > this.maxObjectBytes && this.skip) this.decide("skip");
        else if (this.decision !== "skip") {
          this.check(result);
          this.decide("pass");
        }
      }
    };
    inflater.onEnd = (status) => {
      inflater.err = status;
    };
    this.inflater = inflater;
  }

  /** The current entry has been read whole. */
  private endEntry(): void {
    if (this.decision === undefined) this.decide("pass");
    this.objects++;
    this.largest = Math.max(this.largest, this.result ?? this.inflated);
    if (this.decision !== "skip") return;
    const whole = this.type !== 6 && this.type !== 7;
    if (whole && this.inflated !== this.size) {
      // A header that lies about a blob over the cap: nothing else to trust in this pack.
      this.state = "done";
      throw new PackObjectTooLarge(TYPES[this.type] ?? "object", this.size, this.maxObjectBytes);
    }
    const oid = this.blobHash ? this.blobHash.digest("hex") : undefined;
    this.skipped.push({
      oid,
      type: TYPES[this.type] ?? "object",
      bytes: whole ? this.size : (this.result ?? this.inflated),
      baseSkipped: this.baseWasSkipped,
    });
    this.skippedOffsets.add(this.entryStart);
    if (oid) this.skippedOids.add(oid);
    const entry = placeholderEntry(this.headerBytes, this.at - this.entryStart - this.headerBytes);
    if (entry === undefined) {
      this.state = "done";
      throw new PackObjectTooLarge(TYPES[this.type] ?? "object", this.size, this.maxObjectBytes);
    }
    this.emit(entry);
  }

  private check(bytes: number): void {
    if (bytes > this.maxObjectBytes) {
      this.state = "done";
      throw new PackObjectTooLarge(TYPES[this.type] ?? "object", bytes, this.maxObjectBytes);
    }
  }
}

function hex(bytes: readonly number[]): string {
  return bytes.map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A pack entry of exactly `headerBytes` + `dataBytes` bytes holding a blob of n zero bytes
 * (n from 1 to 5): the entry header's size varint padded with zero-valued continuation bytes,
 * then a zlib stream padded with empty stored blocks (RFC 1951 3.2.4, 5 bytes each) and closed
 * by a fixed-Huffman block of the n literals (3.2.6), then their Adler-32 (RFC 1950).
 * @returns undefined when `dataBytes` is under 9 (no such stream fits)
 */
export function placeholderEntry(headerBytes: number, dataBytes: number): Uint8Array | undefined {
  if (dataBytes < 9 || headerBytes < 1) return undefined;
  // dataBytes = 2 (zlib header) + 5 × stored + (2 + n) (fixed block) + 4 (Adler-32)
  const n = ((dataBytes - 9) % 5) + 1;
  const stored = (dataBytes - 8 - n) / 5;
  const entry = new Uint8Array(headerBytes + dataBytes);
  entry[0] = (headerBytes > 1 ? 0x80 : 0) | (3 << 4) | n;
  for (let i = 1; i < headerBytes; i++) entry[i] = i < headerBytes - 1 ? 0x80 : 0;
  let at = headerBytes;
  entry[at++] = 0x78;
  entry[at++] = 0x01;
  for (let i = 0; i < stored; i++) {
    // BFINAL 0, BTYPE 00, then LEN 0 and NLEN 0xffff.
    entry.set([0x00, 0x00, 0x00, 0xff, 0xff], at);
    at += 5;
  }
  // The fixed block, bits packed from the least significant: BFINAL 1, BTYPE 01, n times the
  // literal 0 (code 00110000, 8 bits, most significant bit first), end of block (0000000).
  let bits = 0;
  let count = 0;
  const put = (value: number, length: number) => {
    bits |= value << count;
    count += length;
    while (count >= 8) {
      entry[at++] = bits & 0xff;
      bits >>>= 8;
      count -= 8;
    }
  };
  const code = (value: number, length: number) => {
    for (let i = length - 1; i >= 0; i--) put((value >> i) & 1, 1);
  };
  put(1, 1);
  put(1, 2);
  for (let i = 0; i < n; i++) code(0b00110000, 8);
  code(0, 7);
  if (count > 0) put(0, 8 - count);
  // Adler-32 of n zero bytes: a = 1, b = n.
  entry.set([0, n, 0, 1], at);
  return entry;
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
 * A filter of an upload-pack response body (as isomorphic-git fetches it: pkt-lines, then the
 * pack in side-band channel 1; a server without side-band sends the pack raw after its last
 * line) that hands every pack byte to `pack` as it arrives and returns the body to pass on:
 * the protocol's own lines and the progress and error channels as they came, the pack bytes
 * `pack` returns in their place (in new channel-1 lines of at most 65520 bytes).
 */
export function uploadPackFilter(
  pack: (bytes: Uint8Array) => Uint8Array[],
): (chunk: Uint8Array) => Uint8Array[] {
  let raw = false;
  let pending = new Uint8Array(0);
  const band = (parts: Uint8Array[], out: Uint8Array[]) => {
    for (const part of parts) {
      for (let at = 0; at < part.length; at += 65515) {
        const data = part.subarray(at, at + 65515);
        const line = new Uint8Array(data.length + 5);
        line.set(new TextEncoder().encode((data.length + 5).toString(16).padStart(4, "0")));
        line[4] = 1;
        line.set(data, 5);
        out.push(line);
      }
    }
  };
  return (chunk) => {
    if (raw) return pack(chunk);
    let data = chunk;
    if (pending.length > 0) {
      data = new Uint8Array(pending.length + chunk.length);
      data.set(pending);
      data.set(chunk, pending.length);
    }
    const out: Uint8Array[] = [];
    let at = 0;
    while (data.length - at >= 4) {
      const text = String.fromCharCode(...data.subarray(at, at + 4));
      if (!/^[0-9a-f]{4}$/i.test(text)) {
        // No side-band: the rest is the pack itself ("PACK...").
        raw = true;
        out.push(...pack(data.subarray(at)));
        pending = new Uint8Array(0);
        return out;
      }
      const length = Number.parseInt(text, 16);
      if (length < 4) {
        out.push(data.slice(at, at + 4)); // flush, delimiter or response-end packet
        at += 4;
        continue;
      }
      if (data.length - at < length) break;
      if (data[at + 4] === 1) band(pack(data.subarray(at + 5, at + length)), out);
      else out.push(data.slice(at, at + length));
      at += length;
    }
    pending = data.slice(at);
    return out;
  };
}

/**
 * A reader of an upload-pack response body (uploadPackFilter) that only looks: every pack byte
 * goes to `pack` as it arrives.
 */
export function uploadPackReader(pack: (bytes: Uint8Array) => void): (chunk: Uint8Array) => void {
  const filter = uploadPackFilter((bytes) => {
    pack(bytes);
    return [];
  });
  return (chunk) => {
    filter(chunk);
  };
}
