// A list page's records arrive as UTF-8 bytes in shared slabs that are reused once given back (page-bytes.ts,
// DECISIONS "A list page's bytes"): a view handed out is never overwritten before it is given back, and a page read
// through the production client never becomes strings.
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { encodeJson, Jobs, type JsonText, Tenants } from "@mes/domain"
import { copyOut, giveBack } from "../src/page-bytes.ts"
import { asTenant, useDomainApp } from "./domain-app.ts"

const run = useDomainApp()
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** `size` bytes of `byte`. */
const bytesOf = (size: number, byte: number) => new Uint8Array(size).fill(byte)

describe("page slabs", () => {
  it("a value is copied: the source buffer may be reused at once", () => {
    const source = new TextEncoder().encode(`{"a":1}{"b":2}`)
    const view = copyOut(source, 7, 7)
    source.fill(0)
    expect(text(view)).toBe(`{"b":2}`)
    giveBack([view])
  })

  it("a slab whose views are all given back is reused; one with a view still out is not", () => {
    // fill past a slab (256 kB) with 32 kB values, give all back: the next slab's memory is the first one's
    const first = Array.from({ length: 8 }, (_, i) => copyOut(bytesOf(32 * 1024, i), 0, 32 * 1024))
    const kept = first[3]!
    giveBack(first.filter((v) => v !== kept))
    const second = Array.from({ length: 8 }, (_, i) => copyOut(bytesOf(32 * 1024, 100 + i), 0, 32 * 1024))
    // `kept` still reads what was copied into it: its slab was not handed out again
    expect(kept.every((b) => b === 3)).toBe(true)
    expect(second.some((v) => v.buffer === kept.buffer)).toBe(false)
    giveBack([kept, ...second])
    // now both slabs are free: the next values land in one of them
    const third = Array.from({ length: 9 }, (_, i) => copyOut(bytesOf(32 * 1024, 200 + i), 0, 32 * 1024))
    expect(third.some((v) => v.buffer === kept.buffer || v.buffer === second[0]!.buffer)).toBe(true)
    // and every value reads what was copied into it
    third.forEach((v, i) => expect(v.every((b) => b === 200 + i)).toBe(true))
    giveBack(third)
  })

  it("a value above 64 kB gets a buffer of its own, and giving it back is harmless", () => {
    const big = copyOut(bytesOf(100 * 1024, 7), 0, 100 * 1024)
    expect(big.byteLength).toBe(big.buffer.byteLength)
    giveBack([big, "text", null])
    expect(big.every((b) => b === 7)).toBe(true)
  })
})

describe("a list page through the production client", () => {
  it("arrives as bytes, encodes byte for byte the same after its slabs were reused, and is given back once", async () => {
    const { tenant } = await run(Effect.flatMap(Effect.service(Tenants), (t) => t.create({ name: "page bytes" })))
    const listed = await run(asTenant(tenant.id, Effect.gen(function*() {
      const jobs = yield* Jobs
      for (let i = 0; i < 30; i++) {
        yield* jobs.create({
          job_number: `PB-${i}`,
          customer: `Customer ${"é".repeat(i % 3)}`,
          // ≈ 100 kB a page: the pages in flight fill several slabs
          notes: `${i} `.repeat(1000),
          parts: [{ part_number: `P-${i}`, quantity: 1 + i, operations: [{ operation_name: "Cut", sequence: 1 }] }]
        })
      }
      // several pages in flight at once, as concurrent requests hold them
      return yield* Effect.all(Array.from({ length: 6 }, () => jobs.list({ limit: "30" })), { concurrency: "unbounded" })
    })))
    const rowsOf = (page: { readonly rows: JsonText }) => page.rows
    const first = rowsOf(listed[0])
    expect(first.chunks.some((c) => c instanceof Uint8Array)).toBe(true)
    const expected = first.text
    expect(JSON.parse(expected)).toHaveLength(30)
    // encode and give back one page at a time, reading more pages in between: the slabs of the pages given back are
    // reused by the later ones while the pages not yet encoded keep their bytes
    for (const page of listed) {
      const more = await run(asTenant(tenant.id, Effect.flatMap(Effect.service(Jobs), (jobs) => jobs.list({ limit: "30" }))))
      expect(text(encodeJson(rowsOf(page), undefined, true))).toBe(expected)
      expect(text(encodeJson(rowsOf(more), undefined, true))).toBe(expected)
    }
  })
})
