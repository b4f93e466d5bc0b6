// Field schemas shared by every resource (spec section 2 conventions).
import * as Schema from "effect/Schema"

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/

const isCalendarDate = (s: string): boolean => {
  const m = ISO_DATE.exec(s)
  if (m === null) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const dt = new Date(Date.UTC(y, mo - 1, d))
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === mo - 1 && dt.getUTCDate() === d
}

export const Uuid = Schema.String.check(Schema.isUUID())
export const Text = Schema.String
export const Name255 = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(255))
export const Max255 = Schema.String.check(Schema.isMaxLength(255))
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
export const IsoDate = Schema.String.check(
  Schema.makeFilter<string>(
    (s) => isCalendarDate(s.slice(0, 10)) && (s.length === 10 || ISO_TIMESTAMP.test(s)),
    { representation: { id: "mes/isIsoDate", payload: {} }, expected: "an ISO 8601 date", message: undefined } as any
  )
)

export const IsoTimestamp = Schema.String.check(
  Schema.makeFilter<string>(
    (s) => ISO_TIMESTAMP.test(s) && isCalendarDate(s.slice(0, 10)) && !Number.isNaN(Date.parse(s)),
    { representation: { id: "mes/isIsoTimestamp", payload: {} }, expected: "an ISO 8601 timestamp" } as any
  )
)

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
