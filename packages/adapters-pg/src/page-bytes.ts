// The records of a list page, as UTF-8 bytes copied once out of the driver's read buffer into shared slabs that are
// reused, so a page never becomes JavaScript strings (DECISIONS, "A list page's bytes"). A statement marks such a
// column by casting it to `refcursor` (`pageColumn`): a text type no other statement of mes returns, which the
// driver hands to the codec registered here instead of decoding it. Whoever holds the views gives them back
// (`giveBack`) once their bytes are copied elsewhere (the response); a view never given back keeps its slab out of
// reuse, and the garbage collector takes that slab with the last view. Nothing is ever overwritten while a view of
// it may still be read.
import { PgTypes } from "@effect/sql-pg"
import * as Result from "effect/Result"

/** A page column's value: bytes in a slab, or text where the client was made without `pageTypes`. */
export type PageChunk = Uint8Array | string

/** PostgreSQL's `refcursor` type (a text type): the marker of a page column. */
export const PAGE_OID = 1790

/** `expression` (JSON or text) as a page column: its bytes arrive in a slab (see above). */
export const pageColumn = (expression: string) => `(${expression})::text::refcursor`

const SLAB_BYTES = 256 * 1024
/** A value above this gets a buffer of its own (a 1,000-record page's rows are far below it). */
const LARGEST_SHARED = 64 * 1024
/** Idle slabs kept for reuse (4 MB). */
const KEPT = 16

interface Slab {
  readonly bytes: Uint8Array
  /** Bytes handed out so far. */
  used: number
  /** Views handed out and not given back. */
  live: number
}

const slabOf = new WeakMap<ArrayBufferLike, Slab>()
const idle: Array<Slab> = []
let current: Slab | undefined

const retire = (slab: Slab) => {
  if (slab.live === 0 && idle.length < KEPT) {
    slab.used = 0
    idle.push(slab)
  }
}

/** A copy of `size` bytes at `offset`, in the current slab. */
export const copyOut = (bytes: Uint8Array, offset: number, size: number): Uint8Array => {
  if (size > LARGEST_SHARED) return bytes.slice(offset, offset + size)
  let slab = current
  if (slab === undefined || slab.used + size > SLAB_BYTES) {
    if (slab !== undefined) retire(slab)
    slab = idle.pop()
    if (slab === undefined) {
      slab = { bytes: new Uint8Array(SLAB_BYTES), used: 0, live: 0 }
      slabOf.set(slab.bytes.buffer, slab)
    }
    current = slab
  }
  const view = slab.bytes.subarray(slab.used, slab.used + size)
  view.set(bytes.subarray(offset, offset + size))
  slab.used += size
  slab.live++
  return view
}

/** Gives back views that `copyOut` returned (each once); other values are ignored. */
export const giveBack = (views: ReadonlyArray<unknown>): void => {
  for (const view of views) {
    if (!(view instanceof Uint8Array)) continue
    const slab = slabOf.get(view.buffer)
    if (slab === undefined) continue
    slab.live--
    if (slab !== current) retire(slab)
  }
}

const encoder = new TextEncoder()

/** Driver types with page columns read into slabs (the client's `types` option). */
export const pageTypes = (): PgTypes.Registry => {
  const registry = PgTypes.makeRegistry()
  registry.register<Uint8Array | string>(PAGE_OID, {
    encode: (value) => Result.succeed(typeof value === "string" ? encoder.encode(value) : value),
    decode: (bytes) => Result.succeed(copyOut(bytes, 0, bytes.length)),
    read: (bytes, offset, size) => Result.succeed(copyOut(bytes, offset, size))
  })
  return registry
}
