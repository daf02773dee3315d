// The size a Git object declares, read from the pack before the object is inflated, so a cap on
// what an App reads is checked before a 200 MB (compressible) blob ever lands in memory.
// Pack format: git Documentation/gitformat-pack.txt ("pack-*.idx files have the following
// format", version 2; "Deltified representation").
import type git from "isomorphic-git";

type Fs = Parameters<typeof git.readBlob>[0]["fs"];

/** One pack's index: sorted object names and their offsets in the pack. */
interface PackIndex {
  pack: string;
  /** The pack's bytes, read once on first use. */
  bytes?: Promise<Uint8Array>;
  names: Uint8Array;
  count: number;
  offsets: (i: number) => number;
}

const indexes = new WeakMap<object, Promise<PackIndex[]>>();

interface ReadFs {
  readdir(path: string): Promise<unknown>;
  readFile(path: string): Promise<unknown>;
}

/** The promise API of the isomorphic-git fs (memfs gives `promises`). */
function promisesOf(fs: Fs): ReadFs {
  return (fs as unknown as { promises: ReadFs }).promises;
}

function bytesOf(data: unknown): Uint8Array {
  if (data instanceof Uint8Array) return data;
  throw new Error("pack file read as text");
}

async function loadIndexes(fs: Fs, gitdir: string): Promise<PackIndex[]> {
  const p = promisesOf(fs);
  const dir = `${gitdir}/objects/pack`;
  let names: string[];
  try {
    names = ((await p.readdir(dir)) as string[]).map(String);
  } catch {
    return [];
  }
  const out: PackIndex[] = [];
  for (const name of names.filter((n) => n.endsWith(".idx"))) {
    const idx = bytesOf(await p.readFile(`${dir}/${name}`));
    const view = new DataView(idx.buffer, idx.byteOffset, idx.byteLength);
    // Version 2 only ("\377tOc", 2): the only one isomorphic-git and git write today.
    if (view.getUint32(0) !== 0xff744f63 || view.getUint32(4) !== 2) continue;
    const count = view.getUint32(8 + 255 * 4);
    const namesAt = 8 + 256 * 4;
    const offsetsAt = namesAt + count * 20 + count * 4;
    const largeAt = offsetsAt + count * 4;
    out.push({
      pack: `${dir}/${name.slice(0, -4)}.pack`,
      names: idx.subarray(namesAt, namesAt + count * 20),
      count,
      offsets: (i) => {
        const o = view.getUint32(offsetsAt + i * 4);
        if ((o & 0x80000000) === 0) return o;
        return Number(view.getBigUint64(largeAt + (o & 0x7fffffff) * 8));
      },
    });
  }
  return out;
}

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(20);
  for (let i = 0; i < 20; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function compare(names: Uint8Array, i: number, key: Uint8Array): number {
  for (let j = 0; j < 20; j++) {
    const d = (names[i * 20 + j] as number) - (key[j] as number);
    if (d !== 0) return d;
  }
  return 0;
}

function find(index: PackIndex, key: Uint8Array): number | undefined {
  let lo = 0;
  let hi = index.count - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compare(index.names, mid, key);
    if (c === 0) return index.offsets(mid);
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/** A little-endian base-128 varint (the delta header's sizes) from `data` at `at`. */
function varint(data: Uint8Array, at: number): { value: number; next: number } | undefined {
  let value = 0;
  let shift = 0;
  for (let i = at; i < data.length; i++) {
    const b = data[i] as number;
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return { value, next: i + 1 };
  }
  return undefined;
}

/** The first bytes `deflated` inflates to (at least `want`, or all of it): a stream, stopped early. */
async function inflateHead(deflated: Uint8Array, want: number): Promise<Uint8Array> {
  const stream = new Blob([deflated as Uint8Array<ArrayBuffer>])
    .stream()
    .pipeThrough(new DecompressionStream("deflate"));
  const reader = stream.getReader();
  const parts: Uint8Array[] = [];
  let got = 0;
  try {
    while (got < want) {
      const { value, done } = await reader.read();
      if (done || value === undefined) break;
      parts.push(value);
      got += value.byteLength;
    }
  } catch {
    // A slice cut mid-stream ends in an error once its bytes run out; what came before is kept.
  } finally {
    reader.cancel().catch(() => {});
  }
  const out = new Uint8Array(got);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/**
 * The size in bytes of the object `oid` once inflated (and, for a delta, once applied), as its
 * pack declares it: the type-and-size header of a whole object, or the result size at the head
 * of a delta (only the delta's first bytes are inflated). Reads only the pack's index and a few
 * bytes of the pack.
 * @returns the declared size, or undefined when the object is in no version-2 pack (a loose
 *   object: the caller reads it as before) or the pack cannot be read
 */
export async function declaredSize(
  fs: Fs,
  gitdir: string,
  cache: object,
  oid: string,
): Promise<number | undefined> {
  let pending = indexes.get(cache);
  if (pending === undefined) {
    pending = loadIndexes(fs, gitdir).catch(() => []);
    indexes.set(cache, pending);
  }
  const key = hexToBytes(oid);
  for (const index of await pending) {
    const offset = find(index, key);
    if (offset === undefined) continue;
    try {
      index.bytes ??= promisesOf(fs).readFile(index.pack).then(bytesOf);
      const pack = await index.bytes;
      let at = offset;
      let b = pack[at++] as number;
      const type = (b >> 4) & 7;
      let size = b & 0x0f;
      let shift = 4;
      while (b & 0x80) {
        b = pack[at++] as number;
        size += (b & 0x7f) * 2 ** shift;
        shift += 7;
      }
      if (type >= 1 && type <= 4) return size;
      if (type === 6) {
        // OFS_DELTA: a negative offset (its own varint form) to the base comes first.
        do b = pack[at++] as number;
        while (b & 0x80);
      } else if (type === 7)
        at += 20; // REF_DELTA: the base's name.
      else return undefined;
      const head = await inflateHead(pack.subarray(at, at + 256), 20);
      const base = varint(head, 0);
      const result = base && varint(head, base.next);
      return result?.value;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
