// The driver's message parser as patched (patches/@effect__sql-pg@4.0.5.patch, DECISIONS "The driver's parse
// buffer" and "A list page's bytes"). When a socket chunk does not fit, the parser compacts its buffer in place and
// reuses it, because no field reader hands out a view of it (PgTypes copies the bytes it returns); only a message
// whose payload is a view (CopyData, Unknown, authentication data, a DataRow read without a field reader) makes the
// next refill take a new buffer, which has room for the message in progress plus the pool. Unpatched, every refill
// allocated, doubling the 64 kB pool until the pending bytes and the chunk fit: 128 kB for every 64 kB chunk that
// arrived in the middle of a row (a list page), 512 kB for one long row.
import { makeParser } from "@effect/sql-pg/PgProtocol"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"

/** A backend message: its type, its length (the length's 4 bytes included), then `payload`. */
const message = (type: number, payload: Uint8Array) => {
  const bytes = new Uint8Array(1 + 4 + payload.length)
  bytes[0] = type
  new DataView(bytes.buffer).setInt32(1, 4 + payload.length)
  bytes.set(payload, 5)
  return bytes
}

/** `size` bytes, the i-th being `fill(i)`. */
const filled = (size: number, fill: (i: number) => number) => Uint8Array.from({ length: size }, (_, i) => fill(i))

/** A DataRow ('D') with one field of `size` bytes. */
const dataRow = (size: number, fill: (i: number) => number) => {
  const head = new DataView(new ArrayBuffer(6))
  head.setInt16(0, 1)
  head.setInt32(2, size)
  return message(0x44, Buffer.concat([new Uint8Array(head.buffer), filled(size, fill)]))
}

/** CommandComplete ('C', "SELECT 1") and ReadyForQuery ('Z', idle): the end of a result. */
const END = Buffer.concat([message(0x43, new TextEncoder().encode("SELECT 1\0")), message(0x5a, Uint8Array.of(0x49))])

/** `rows`, then the end of the result, as the bytes a socket delivers. */
const result = (...rows: ReadonlyArray<Uint8Array>) => Buffer.concat([...rows, END])

/** The field reader the driver builds for one binary column of type `oid` (25 text, 17 bytea). */
const readerOf = (oid: number) => Result.getOrThrow(PgTypes.makeFieldReader([{ dataTypeOid: oid, format: 1 }]))

/** Feeds `bytes` in socket-sized chunks (64 kB, as Node reads them) and collects the messages. */
const parseInChunks = (bytes: Uint8Array, chunk = 65536, readField?: (bytes: Uint8Array, offset: number, size: number, column: number) => unknown) => {
  const parser = makeParser(readField === undefined ? undefined : { readField: readField as never })
  const messages: Array<{ readonly _tag: string; readonly values?: ReadonlyArray<Uint8Array | null> }> = []
  for (let at = 0; at < bytes.length; at += chunk) {
    parser.pushEach(bytes.slice(at, at + chunk), (m) => messages.push(m as never))
  }
  return messages
}

const letters = (row: number) => (i: number) => 0x61 + ((i + row) % 26)
const lettersText = (row: number, size: number) => Array.from({ length: size }, (_, i) => String.fromCharCode(letters(row)(i))).join("")

describe("the driver's parser (patched)", () => {
  it("a page of 4 kB rows read as text: one buffer, compacted and reused, for 4 MB of rows", () => {
    const seen = new Set<ArrayBufferLike>()
    const text = readerOf(25)
    const messages = parseInChunks(result(...Array.from({ length: 1000 }, (_, r) => dataRow(3900, letters(r)))), 65536, (bytes, offset, size, column) => {
      seen.add(bytes.buffer)
      return text(bytes, offset, size, column)
    })
    expect(messages.length).toBe(1002)
    // unpatched: a new buffer for each of the ≈ 60 chunks; patched: the first buffers while it grows to fit a
    // chunk and a row, then that one
    expect(seen.size).toBeLessThanOrEqual(5)
    const values = messages.slice(0, 1000).map((m) => m.values![0] as unknown as string)
    expect(values.every((v, r) => v === lettersText(r, 3900))).toBe(true)
  })

  it("bytea values are copies, intact after the buffer they were read from is reused", () => {
    const messages = parseInChunks(result(...Array.from({ length: 1000 }, (_, r) => dataRow(3900, letters(r)))), 65536, readerOf(17))
    const values = messages.slice(0, 1000).map((m) => m.values![0]!)
    expect(values.every((v) => v.buffer.byteLength === 3900)).toBe(true)
    expect(values.every((v, r) => v.every((b, i) => b === letters(r)(i)))).toBe(true)
  })

  it("CopyData payloads are views, so their buffer is not reused under them: every payload stays intact", () => {
    const bytes = Buffer.concat([...Array.from({ length: 300 }, (_, r) => message(0x64, filled(3900, letters(r)))), END])
    const messages = parseInChunks(bytes, 65536, readerOf(25)) as unknown as ReadonlyArray<{ _tag: string; data?: Uint8Array }>
    const payloads = messages.filter((m) => m._tag === "CopyData").map((m) => m.data!)
    expect(payloads.length).toBe(300)
    expect(payloads.every((p, r) => p.length === 3900 && p.every((b, i) => b === letters(r)(i)))).toBe(true)
  })

  it("rows read without a field reader are views: every row of a 4 MB page stays intact, each refill takes the row in progress plus the pool", () => {
    const messages = parseInChunks(result(...Array.from({ length: 1000 }, (_, r) => dataRow(3900, letters(r)))))
    expect(messages.length).toBe(1002)
    const buffers = new Set(messages.flatMap((m) => (m.values ?? []).map((v) => v!.buffer)))
    // unpatched: every buffer after the first few is 128 kB; patched: at most one row (3,911 bytes) plus 64 kB
    for (const b of buffers) expect(b.byteLength).toBeLessThanOrEqual(3911 + 65536)
    expect(messages.slice(0, 1000).every((m, r) => m.values![0]!.length === 3900 && m.values![0]!.every((b, i) => b === letters(r)(i)))).toBe(true)
  })

  it("reads a 386 kB row from 64 kB chunks into one buffer of the row's size plus the pool, bytes intact", () => {
    const size = 386 * 1024
    const fill = (i: number) => (i * 31 + 7) & 0x7f
    const messages = parseInChunks(result(dataRow(size, fill)))
    expect(messages.map((m) => m._tag)).toEqual(["DataRow", "CommandComplete", "ReadyForQuery"])
    const field = messages[0]!.values![0]!
    expect(field.length).toBe(size)
    let intact = true
    for (let i = 0; i < size; i++) if (field[i] !== fill(i)) intact = false
    expect(intact).toBe(true)
    // unpatched: 512 kB (the doubling); patched: the row (size + 11 bytes) plus the pool (at most 64 kB)
    expect(field.buffer.byteLength).toBeGreaterThanOrEqual(size + 11)
    expect(field.buffer.byteLength).toBeLessThanOrEqual(size + 11 + 65536)
  })

  it("a row arriving in uneven pieces, some splitting its header, still parses whole", () => {
    const size = 200_000
    const fill = (i: number) => (i * 13) & 0xff
    const bytes = result(dataRow(size, fill))
    for (const chunk of [3, 4096, 65536, 100_003]) {
      const messages = parseInChunks(bytes, chunk)
      expect(messages.map((m) => m._tag)).toEqual(["DataRow", "CommandComplete", "ReadyForQuery"])
      const field = messages[0]!.values![0]!
      expect(field.length).toBe(size)
      expect(field[size - 1]).toBe(fill(size - 1))
      expect(field[0]).toBe(fill(0))
    }
  })
})
