// The driver's message writer as patched (patches/@effect__sql-pg@4.0.5.patch): a long string is given room for one
// byte per UTF-16 unit first, and more only for what the encoder could not fit, instead of three bytes per unit up
// front (which made every long ASCII parameter grow the writer's 8 kB pool). Written text must still come out whole
// wherever in the pool it starts: ASCII, two-, three- and four-byte characters, and the terminating NUL of a C string
// when the encoder filled the pool to its very end.
import { encodeParse, encodePasswordMessage } from "@effect/sql-pg/PgProtocol"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The name and query a `Parse` message carries, and whether its length field is right. */
const readParse = (bytes: Uint8Array) => {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const nameEnd = bytes.indexOf(0, 5)
  const queryEnd = bytes.indexOf(0, nameEnd + 1)
  return {
    type: bytes[0],
    lengthOk: view.getInt32(1) === bytes.length - 1,
    name: utf8.decode(bytes.subarray(5, nameEnd)),
    query: utf8.decode(bytes.subarray(nameEnd + 1, queryEnd)),
    params: view.getInt16(queryEnd + 1)
  }
}

const parse = (name: string, query: string) => {
  const encoded = encodeParse({ name, query, parameterTypes: [] })
  if (Result.isFailure(encoded)) throw new Error("encodeParse failed")
  // a copy: the writer's pool is shared by the next message
  return readParse(encoded.success.slice())
}

/** `n` UTF-16 units of `unit` repeated, after an ASCII prefix of `ascii` characters. */
const sample = (ascii: number, unit: string, n: number) => "s".repeat(ascii) + unit.repeat(Math.ceil(n / unit.length)).slice(0, n - (n % unit.length))

describe("the driver's message writer (patched)", () => {
  it("writes long ASCII, two-, three- and four-byte text whole, from every position in its pool", () => {
    // lengths stepping by primes walk the start of each message through the 8 kB pool and across its end
    for (const unit of ["a", "é", "€", "😀"]) {
      for (let n = 40; n < 12_000; n += 97) {
        for (const ascii of [0, 1, 60]) {
          const query = sample(ascii, unit, n)
          const name = `s${n % 7}`
          const got = parse(name, query)
          expect(got.type).toBe(0x50)
          expect(got.lengthOk).toBe(true)
          expect(got.name).toBe(name)
          expect(got.query).toBe(query)
          expect(got.params).toBe(0)
        }
      }
    }
  })

  it("ends a C string with its NUL when multi-byte text filled the pool to its very end", () => {
    // A message longer than the pool leaves the writer a fresh 8 kB pool. A password message (type, length, the
    // text as a C string) of `pad` ASCII characters then takes pad + 6 bytes of it, and the next one's 2,000
    // two-byte characters (4,000 bytes) start 5 bytes later: at pad = 8,192 - 6 - 5 - 4,000 they end exactly at the
    // pool's end, and the NUL needs room of its own. The pads around it cover any miscount.
    const password = (text: string) => {
      const bytes = encodePasswordMessage({ password: text }).slice()
      const view = new DataView(bytes.buffer)
      return { lengthOk: view.getInt32(1) === bytes.length - 1, nul: bytes[bytes.length - 1], text: utf8.decode(bytes.subarray(5, -1)) }
    }
    for (let pad = 4_100; pad < 4_260; pad++) {
      parse("", "r".repeat(20_000))
      expect(password("f".repeat(pad)).text).toBe("f".repeat(pad))
      const text = "é".repeat(2_000)
      expect(password(text)).toEqual({ lengthOk: true, nul: 0, text })
    }
  })
})
