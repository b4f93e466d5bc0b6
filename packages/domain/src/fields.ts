// Field schemas shared by every resource (spec section 2 conventions).
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"

// A date `YYYY-MM-DD` with an optional time of day (group 4) and offset (group 5). The year may also be written with a
// sign or more digits (ISO 8601's expanded years): such a year outside the range below is refused as out of range, not
// malformed.
const ISO = /^([+-]?\d{4,})-(\d{2})-(\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)(Z|[+-]\d{2}:?\d{2})?)?$/
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** The year of a date or timestamp whose day is one of the (proleptic Gregorian) calendar, in any year; else undefined. */
const isoYear = (s: string): number | undefined => {
  const m = ISO.exec(s)
  if (m === null) return undefined
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
  const days = mo === 2 && leap ? 29 : DAYS_IN_MONTH[mo - 1]
  return days !== undefined && d >= 1 && d <= days ? y : undefined
}

/**
 * The dates and instants the API takes (DECISIONS: dates and timestamps): years 0001 to 9999, those PostgreSQL stores
 * (it has no year 0) and the answers write as `YYYY` (mes_ts would write 1 BC as 0001 and 10000 with five digits).
 */
const DATE_RANGE = { minimum: "0001-01-01", maximum: "9999-12-31" } as const
const INSTANT_RANGE = { minimum: "0001-01-01T00:00:00.000Z", maximum: "9999-12-31T23:59:59.999Z" } as const
const FIRST_MS = Date.parse(INSTANT_RANGE.minimum)
const LAST_MS = Date.parse(INSTANT_RANGE.maximum)

/** The message of a date or timestamp outside its range (`range`: a timestamp's unless told), in a body or a query. */
export const isoRangeMessage = (name: string, range: { readonly minimum?: unknown; readonly maximum?: unknown } = INSTANT_RANGE) =>
  `${name} must be between ${range.minimum} and ${range.maximum}`

/**
 * A timestamp as the API reads it, its zone written out (DECISIONS: dates and timestamps): one without an offset is
 * UTC, as a date alone is (its midnight). JavaScript read such a time as the server's local time and PostgreSQL as its
 * session's time zone, so that the two could take one timestamp for different instants.
 */
const withZone = (s: string): string => {
  const m = ISO.exec(s)
  return m === null || m[5] !== undefined ? s : m[4] === undefined ? `${s}T00:00:00Z` : `${s}Z`
}

/**
 * The instant (ms) of a timestamp or date written as the API takes it (see withZone), a space for the `T` read as the
 * `T`: JavaScript's own reading of that form takes a year below 0100 for one of 1950 to 2049.
 */
export const isoInstant = (s: string): number => {
  const z = withZone(s)
  return Date.parse(z[10] === " " ? `${z.slice(0, 10)}T${z.slice(11)}` : z)
}

/** Where a date or timestamp in the API's form falls against the range: before it (-1), in it (0), after it (1). */
const side = (s: string, instant: boolean): -1 | 0 | 1 => {
  const y = isoYear(s)
  if (y === undefined) return 0
  if (y < 1) return -1
  if (y > 9999) return 1
  if (!instant) return 0
  // an offset may move the instant of a first or last day's time past the range
  const t = isoInstant(s)
  return t < FIRST_MS ? -1 : t > LAST_MS ? 1 : 0
}

/**
 * The largest UTC offset PostgreSQL takes (±15:59; JavaScript takes ±23:59). No zone is past ±14:00: a larger one is
 * refused as malformed, where PostgreSQL had failed the write (500).
 */
const MAX_OFFSET_MINUTES = 15 * 60 + 59

/** Whether the offset (group 5) of a date or timestamp in ISO's form, if any, is one PostgreSQL takes. */
const offsetFits = (s: string): boolean => {
  const m = /([+-])(\d{2}):?(\d{2})$/.exec(ISO.exec(s)![5] ?? "")
  return m === null || Number(m[2]) * 60 + Number(m[3]) <= MAX_OFFSET_MINUTES
}

/**
 * A date or timestamp in the API's form (a year of four digits, a time of day and an offset that are ones), or one
 * whose year is outside the range however written. A date's time is checked as a timestamp's: PostgreSQL reads it
 * (`2026-01-01T25:00:00Z` failed a date field's write).
 */
const isIsoForm = (s: string): boolean => {
  const y = isoYear(s)
  if (y === undefined) return false
  if (y < 1 || y > 9999) return true
  return /^\d{4}-/.test(s) && !Number.isNaN(isoInstant(s)) && offsetFits(s)
}

/** The checks of a date or timestamp: its form (DATE_FORMAT, checked first), then the range (MIN_VALUE, MAX_VALUE). */
const isoChecks = (instant: boolean, id: string, expected: string) => {
  const payload = instant ? INSTANT_RANGE : DATE_RANGE
  return [
    Schema.makeFilter<string>((s) => isIsoForm(s), { representation: { id, payload: {} }, expected } as any, true),
    Schema.makeFilter<string>((s) => side(s, instant) !== -1, { representation: { id: "mes/isIsoNotBefore", payload } } as any),
    Schema.makeFilter<string>((s) => side(s, instant) !== 1, { representation: { id: "mes/isIsoNotAfter", payload } } as any)
  ] as const
}

/** The characters of a string, counted as Unicode code points: an emoji is one, where its UTF-16 length is 2. */
const charCount = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

/**
 * Whether a string has at least `min` characters, counted as code points (as spec 8's "chars", PostgreSQL's
 * `char_length` and JSON Schema's `minLength` count them; Effect's isMinLength counts UTF-16 units). A string has at
 * most as many code points as UTF-16 units and at least half as many: most are settled without counting.
 */
export const hasAtLeastChars = (s: string, min: number): boolean => s.length >= 2 * min || (s.length >= min && charCount(s) >= min)

/** Whether a string has at most `max` characters (code points, see hasAtLeastChars). */
export const hasAtMostChars = (s: string, max: number): boolean => s.length <= max || (s.length <= 2 * max && charCount(s) <= max)

/** A length check of text in characters (code points), JSON Schema's `keyword` with the same count. */
const charLimit = (keyword: "minLength" | "maxLength", n: number, holds: (s: string) => boolean) =>
  Schema.makeFilter<string>(holds, {
    expected: `a string of ${keyword === "minLength" ? "at least" : "at most"} ${n} characters`,
    representation: { id: keyword === "minLength" ? "mes/isMinChars" : "mes/isMaxChars", payload: { [keyword]: n } },
    toJsonSchema: () => ({ [keyword]: n }),
    arbitraryConstraint: { [keyword]: n }
  } as any)

/** The length checks of every text field: at least `minLength` characters (code points), else a MIN_LENGTH detail. */
export const isMinChars = (minLength: number) => charLimit("minLength", minLength, (s) => hasAtLeastChars(s, minLength))

/** At most `maxLength` characters (code points), else a MAX_LENGTH detail. */
export const isMaxChars = (maxLength: number) => charLimit("maxLength", maxLength, (s) => hasAtMostChars(s, maxLength))

export const Uuid = Schema.String.check(Schema.isUUID())
export const Text = Schema.String
export const Name255 = Schema.String.check(isMinChars(1), isMaxChars(255))
export const Max255 = Schema.String.check(isMaxChars(255))
/** The range of PostgreSQL `integer`: a larger value is a MAX_VALUE detail, not a database error. */
export const INT4_MAX = 2147483647
export const Int32 = Schema.Int.check(Schema.isGreaterThanOrEqualTo(-INT4_MAX - 1), Schema.isLessThanOrEqualTo(INT4_MAX))
export const NonNegativeInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(INT4_MAX))
export const PositiveInt = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(INT4_MAX))
/**
 * The largest PostgreSQL `double precision` (and JavaScript number): a decimal field is bounded by it, so `1e400`,
 * which JSON reads as Infinity, is a MAX_VALUE detail as in an integer field, not a finiteness one.
 */
export const FLOAT8_MAX = Number.MAX_VALUE
export const NonNegativeNumber = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(FLOAT8_MAX))
export const Percentage = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0), Schema.isLessThanOrEqualTo(100))
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** A calendar date `YYYY-MM-DD` (spec 7.3 DATE_FORMAT); a full ISO timestamp is accepted and cut to its date. */
export const IsoDate = Schema.String.check(...isoChecks(false, "mes/isIsoDate", "an ISO 8601 date"))

/**
 * An ISO 8601 timestamp (or a date: its UTC midnight) whose instant is in INSTANT_RANGE, decoded with its zone written
 * out (withZone): the database reads the instant that the checks and the domain read.
 */
export const IsoTimestamp = Schema.String.check(...isoChecks(true, "mes/isIsoTimestamp", "an ISO 8601 timestamp")).pipe(
  Schema.decode({ decode: SchemaGetter.transform(withZone), encode: SchemaGetter.transform((s: string) => s) })
)

/**
 * What the API makes of a date or timestamp given outside a body (a query's bound): its instant, or the check it
 * fails, IsoTimestamp's checks in their order: the form (DATE_FORMAT), then the range (MIN_VALUE, MAX_VALUE).
 */
export const readInstant = (s: string): number | "DATE_FORMAT" | "MIN_VALUE" | "MAX_VALUE" => {
  if (!isIsoForm(s)) return "DATE_FORMAT"
  const at = side(s, true)
  return at === -1 ? "MIN_VALUE" : at === 1 ? "MAX_VALUE" : isoInstant(s)
}

/** A record of a tenant as the API shows it: its id, tenant, `fields`, and when it was created and last updated. */
export const tenantRecord = <F extends Schema.Struct.Fields>(fields: F) =>
  Schema.Struct({ id: Uuid, tenant_id: Uuid, ...fields, created_at: Schema.String, updated_at: Schema.String })

/** `key?: T` for JSON inputs (no `| undefined`, no null). */
export const opt = <S extends Schema.Top>(s: S) => Schema.optionalKey(s)
/** `key?: T | null`: a nullable optional field whose null clears the value. */
export const optNull = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

/** Each aliases object's [alias, canonical] pairs, listed once (a nested create renames for every operation). */
const aliasPairs = new WeakMap<object, ReadonlyArray<readonly [string, string]>>()

/** Moves alias keys to their canonical name when the canonical key is absent (DECISIONS: aliases); `input` itself when it names none. */
export const renameAliases = (input: unknown, aliases: Readonly<Record<string, string>>): unknown => {
  if (input === null || typeof input !== "object" || Array.isArray(input)) return input
  let pairs = aliasPairs.get(aliases)
  if (pairs === undefined) aliasPairs.set(aliases, pairs = Object.entries(aliases))
  let out: Record<string, unknown> | undefined
  for (let i = 0; i < pairs.length; i++) {
    const [alias, canonical] = pairs[i]!
    if (alias in (input as object)) {
      out ??= { ...(input as Record<string, unknown>) }
      if (!(canonical in out)) out[canonical] = out[alias]
      delete out[alias]
    }
  }
  return out ?? input
}
