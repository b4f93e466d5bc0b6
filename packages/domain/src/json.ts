// JSON built by the database and handed to the wire untouched (ARCHITECTURE: reads come out of
// PostgreSQL as JSON). A use case returns `JsonText<A>`; a driving adapter writes it with
// `encodeJson`, which copies its pieces into the response bytes instead of parsing and
// re-serializing them. A piece is text, or UTF-8 bytes straight from the database driver (a list
// page never becomes a JavaScript string at all).

/** A piece of JSON text: a string, or its UTF-8 bytes. */
export type JsonChunk = string | Uint8Array

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** JSON text of a value of type `A`, produced elsewhere (the database) and not parsed here. */
export class JsonText<out A = unknown> {
  declare readonly _A: (_: never) => A
  /** The pieces whose concatenation is the JSON text. */
  readonly chunks: ReadonlyArray<JsonChunk>
  readonly #release: (() => void) | undefined
  #released = false
  constructor(chunks: ReadonlyArray<JsonChunk>, release?: () => void) {
    this.chunks = chunks
    this.#release = release
  }
  /**
   * Gives the chunks' memory back to whoever lent it (the database adapter's page buffers), at most once. Call it
   * only when the chunks will never be read again: `encodeJson(value, allocate, true)` does, after copying them.
   */
  release(): void {
    const release = this.#release
    if (release === undefined || this.#released) return
    this.#released = true
    release()
  }
  /** The JSON text as a string (decodes byte pieces). */
  get text(): string {
    let out = ""
    for (const c of this.chunks) out += typeof c === "string" ? c : decoder.decode(c)
    return out
  }
  /** The value itself, for callers that need it (costs a parse). */
  parse(): A {
    return JSON.parse(this.text) as A
  }
  /** Plain JSON.stringify still works (slowly); `encodeJson` splices the pieces instead. */
  toJSON(): unknown {
    if (splicing !== undefined) {
      splicing.push(this)
      return MARK
    }
    return this.parse()
  }
}

export const jsonText = <A>(text: string): JsonText<A> => new JsonText<A>([text])

/**
 * JSON text from pieces, in order (text and UTF-8 bytes may be mixed). `release`: gives back the memory the byte
 * pieces were lent in (a list page's slabs), called by `JsonText.release`.
 */
export const jsonChunks = <A>(chunks: ReadonlyArray<JsonChunk>, release?: () => void): JsonText<A> =>
  new JsonText<A>(chunks, release)

/** A list of records as JSON text plus how many match in all (one page of a list). */
export interface JsonSlice<A> {
  readonly rows: JsonText<ReadonlyArray<A>>
  readonly total: number
}

// A marker no caller can produce: random per process, so user data cannot collide with it.
const MARK = `\u0000json:${globalThis.crypto.randomUUID()}\u0000`
const QUOTED_MARK = JSON.stringify(MARK)
let splicing: Array<JsonText> | undefined

/** JSON.stringify of `value` in pieces: every `JsonText` inside it contributes its own pieces (and goes into `texts`). */
const pieces = (value: unknown, texts: Array<JsonText>): Array<JsonChunk> => {
  splicing = texts
  let out: string
  try {
    // synchronous, so the module-level splice list cannot be shared by two calls
    out = JSON.stringify(value)
  } finally {
    splicing = undefined
  }
  if (texts.length === 0) return [out]
  const parts = out.split(QUOTED_MARK)
  const result: Array<JsonChunk> = [parts[0]!]
  for (let i = 1; i < parts.length; i++) result.push(...texts[i - 1]!.chunks, parts[i]!)
  return result
}

/**
 * The UTF-8 bytes of `value` as JSON, every `JsonText` inside copied in as it is (one copy). The buffer is sized
 * for one byte per character of text (JSON is mostly ASCII) and grows only when a text turns out not to fit;
 * sizing for the worst case (3 bytes) tripled every response's allocation.
 */
export const encodeJson = (
  value: unknown,
  /** Where the bytes go (e.g. a pooled buffer); it may hand back more room than asked for. */
  allocate: (size: number) => Uint8Array = (size) => new Uint8Array(size),
  /** Release every `JsonText` inside once it is copied: nothing reads them again. */
  consume = false
): Uint8Array => {
  const texts: Array<JsonText> = []
  const chunks = pieces(value, texts)
  let rest = 0
  for (const c of chunks) rest += c.length
  const given = allocate(rest)
  let out = given.length === rest ? given : given.subarray(0, rest)
  let at = 0
  for (const c of chunks) {
    rest -= c.length
    if (typeof c !== "string") {
      out.set(c, at)
      at += c.length
    } else if (c.length <= 16 && isAscii(c)) {
      for (let i = 0; i < c.length; i++) out[at++] = c.charCodeAt(i)
    } else {
      // never into the room kept for the chunks after this one
      const { read, written } = encoder.encodeInto(c, out.subarray(at, out.length - rest))
      at += written
      if (read < c.length) {
        // room for the rest of this text at 3 bytes per UTF-16 unit, and for the chunks after it
        const grown = new Uint8Array(at + (c.length - read) * 3 + rest)
        grown.set(out.subarray(0, at))
        out = grown
        at += encoder.encodeInto(c.slice(read), out.subarray(at)).written
      }
    }
  }
  if (consume) for (const t of texts) t.release()
  return at === out.length ? out : out.subarray(0, at)
}

const isAscii = (s: string) => {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false
  return true
}
