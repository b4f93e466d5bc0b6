// Buffers for large response bodies, taken from a pool and given back once Node has written them. A list page
// (≈ 400 kB) encoded into a new buffer per request made the server's memory grow by what V8 had not yet collected:
// the buffers outlive a young-generation collection or two while their requests are in flight, and are then freed
// only by a full one (DECISIONS: "A list page's bytes").
import type { ServerResponse } from "node:http"

/** Bodies from 8 kB up to 1 MB come from the pool, in power-of-two buffers of 16 kB to 1 MB; others are allocated. */
const MIN_SHIFT = 14
const MAX_SHIFT = 20

export interface BodyBuffers {
  /** A buffer of at least `size` bytes (pooled when the size is in range). */
  readonly take: (size: number) => Uint8Array
  /** Gives back the buffer under `body` once `response` has finished writing it (nothing if it is not pooled). */
  readonly giveBackAfter: (response: ServerResponse, body: Uint8Array) => void
  /** Bytes kept for reuse now. */
  readonly kept: () => number
}

/** A pool that keeps at most `keepBytes` of idle buffers (default 16 MB). */
export const bodyBuffers = (keepBytes = 16 * 1024 * 1024): BodyBuffers => {
  const free: Array<Array<ArrayBuffer>> = Array.from({ length: MAX_SHIFT - MIN_SHIFT + 1 }, () => [])
  const pooled = new WeakSet<ArrayBuffer>()
  let kept = 0
  const classOf = (size: number) => Math.max(MIN_SHIFT, 32 - Math.clz32(size - 1)) - MIN_SHIFT
  const give = (buffer: ArrayBuffer) => {
    if (!pooled.has(buffer) || kept + buffer.byteLength > keepBytes) return
    const list = free[classOf(buffer.byteLength)]!
    if (list.includes(buffer)) return
    list.push(buffer)
    kept += buffer.byteLength
  }
  return {
    take: (size) => {
      if (size < 1 << (MIN_SHIFT - 1) || size > 1 << MAX_SHIFT) return new Uint8Array(size)
      const c = classOf(size)
      const buffer = free[c]!.pop()
      if (buffer !== undefined) {
        kept -= buffer.byteLength
        return new Uint8Array(buffer)
      }
      const fresh = new ArrayBuffer(1 << (c + MIN_SHIFT))
      pooled.add(fresh)
      return new Uint8Array(fresh)
    },
    giveBackAfter: (response, body) => {
      const buffer = body.buffer
      if (!(buffer instanceof ArrayBuffer) || !pooled.has(buffer)) return
      // 'finish': the last write's callback ran, so the socket holds none of these bytes any more; a response
      // that closes without finishing leaves its buffer to the garbage collector
      response.once("finish", () => give(buffer))
    },
    kept: () => kept
  }
}
