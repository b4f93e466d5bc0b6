import { describe, expect, it } from "vitest"
import { encodeJson, jsonChunks, jsonText } from "../src/index.ts"

const utf8 = new TextEncoder()

// texts of every width: ASCII, 2-byte (é), 3-byte (€, 工) and 4-byte (surrogate pairs: 🔩), short and long
const samples = ["", "a", "plain ascii", "é", "€", "🔩", "Müller GmbH", "工件-🔩-€", "x".repeat(40), "é".repeat(40), "🔩".repeat(30), `${"a".repeat(20)}€${"b".repeat(20)}`]

/** A deterministic pseudo-random sequence (mulberry32), so a failure names its case. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

describe("encodeJson (database JSON spliced into a response)", () => {
  it("writes the UTF-8 of JSON.stringify, whatever mix of texts, byte pieces and characters, at its exact length", () => {
    const next = random(7)
    const pick = () => samples[Math.floor(next() * samples.length)]!
    for (let n = 0; n < 500; n++) {
      // a record whose text arrives as pieces: some strings, some UTF-8 bytes (as a list page's rows do)
      const pieces = [`{"name":${JSON.stringify(pick())},"rows":[`, ...Array.from({ length: Math.floor(next() * 4) }, (_, i) => {
        const row = `${i === 0 ? "" : ","}${JSON.stringify({ n: i, note: pick() })}`
        return next() < 0.5 ? row : utf8.encode(row)
      }), "]}"]
      const value = { success: true, data: { label: pick(), record: jsonChunks(pieces), more: [jsonText(JSON.stringify(pick())), pick()] } }
      const expected = utf8.encode(JSON.stringify(value))
      const bytes = encodeJson(value)
      expect(bytes.length, `case ${n}`).toBe(expected.length)
      expect(Buffer.from(bytes).equals(Buffer.from(expected)), `case ${n}`).toBe(true)
    }
  })

  it("a text that does not fit at one byte per character grows the buffer once and keeps what came before", () => {
    const long = "🔩é€".repeat(1000)
    const value = { before: "a".repeat(100), t: jsonText(JSON.stringify(long)), after: "tail" }
    expect(new TextDecoder().decode(encodeJson(value))).toBe(JSON.stringify({ before: "a".repeat(100), t: long, after: "tail" }))
  })

  it("gives a text's lent memory back once it is copied, only when asked to consume, and at most once", () => {
    let released = 0
    const rows = jsonChunks([utf8.encode(`[{"a":1}]`)], () => released++)
    const value = { jobs: rows, again: rows }
    expect(new TextDecoder().decode(encodeJson(value))).toBe(`{"jobs":[{"a":1}],"again":[{"a":1}]}`)
    expect(released).toBe(0)
    expect(new TextDecoder().decode(encodeJson(value, undefined, true))).toBe(`{"jobs":[{"a":1}],"again":[{"a":1}]}`)
    expect(released).toBe(1)
    rows.release()
    expect(released).toBe(1)
  })
})
