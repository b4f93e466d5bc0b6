// JSON built by the database and handed to the wire untouched (ARCHITECTURE: reads come out of
// PostgreSQL as JSON). A use case returns `JsonText<A>`; a driving adapter writes it with
// `stringifyJson`, which splices the text in place instead of parsing and re-serializing it.

/** JSON text of a value of type `A`, produced elsewhere (the database) and not parsed here. */
export class JsonText<out A = unknown> {
  declare readonly _A: (_: never) => A
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
  /** The value itself, for callers that need it (costs a parse). */
  parse(): A {
    return JSON.parse(this.text) as A
  }
  /** Plain JSON.stringify still works (slowly); `stringifyJson` splices the text instead. */
  toJSON(): unknown {
    if (splicing !== undefined) {
      splicing.push(this.text)
      return MARK
    }
    return JSON.parse(this.text)
  }
}

export const jsonText = <A>(text: string): JsonText<A> => new JsonText<A>(text)

/** A list of records as JSON text plus how many match in all (one page of a list). */
export interface JsonSlice<A> {
  readonly rows: JsonText<ReadonlyArray<A>>
  readonly total: number
}

// A marker no caller can produce: random per process, so user data cannot collide with it.
const MARK = `\u0000json:${globalThis.crypto.randomUUID()}\u0000`
const QUOTED_MARK = JSON.stringify(MARK)
let splicing: Array<string> | undefined

/**
 * JSON.stringify where every `JsonText` inside `value` is written as its text, unparsed.
 * Synchronous, so the module-level splice list cannot be shared by two calls.
 */
export const stringifyJson = (value: unknown): string => {
  const texts: Array<string> = []
  splicing = texts
  let out: string
  try {
    out = JSON.stringify(value)
  } finally {
    splicing = undefined
  }
  if (texts.length === 0) return out
  const pieces = out.split(QUOTED_MARK)
  let spliced = pieces[0]!
  for (let i = 1; i < pieces.length; i++) spliced += texts[i - 1]! + pieces[i]!
  return spliced
}
