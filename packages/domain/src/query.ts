// List queries (spec 4.15): filters, sort/order and pagination decoded from query strings.
// Malformed values are 400 and well-formed but out-of-range values are 422 (DECISIONS).
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { INT4_MAX, isoRangeMessage, readInstant, Uuid } from "./fields.ts"
import { CurrentTenant } from "./ports.ts"
import { BadRequest } from "./errors.ts"
import type { JsonSlice } from "./json.ts"
import { detail, failIfAny, isStorableText, type ValidationDetail } from "./validation.ts"

export type FilterKind =
  | { readonly kind: "text" }
  | { readonly kind: "uuid" }
  | { readonly kind: "int" }
  | { readonly kind: "bool" }
  | { readonly kind: "timestamp" }
  | { readonly kind: "enum"; readonly values: ReadonlyArray<string> }

export const text = { kind: "text" } as const
export const uuid = { kind: "uuid" } as const
export const int = { kind: "int" } as const
export const bool = { kind: "bool" } as const
/** An ISO 8601 timestamp or date (a bound of a time range); anything else is 422 (see queryInstant). */
export const timestamp = { kind: "timestamp" } as const
export const oneOf = (values: ReadonlyArray<string>) => ({ kind: "enum", values }) as const

export interface ListSpec<F extends Record<string, FilterKind>, S extends string> {
  readonly filters: F
  readonly sort: ReadonlyArray<S>
  readonly defaultSort: S
  readonly defaultOrder?: "asc" | "desc"
  /** Other names accepted for a query key, e.g. `sort_by` for `sort`. */
  readonly aliases?: Readonly<Record<string, string>>
}

type FilterValue<K extends FilterKind> = K extends { kind: "int" } ? number
  : K extends { kind: "bool" } ? boolean
  : string

export interface ListQuery<F extends Record<string, FilterKind>, S extends string> {
  readonly filters: { readonly [k in keyof F]?: FilterValue<F[k]> }
  readonly sort: S
  readonly order: "asc" | "desc"
  readonly limit: number
  readonly offset: number
}

const INT_RE = /^-?\d+$/

/** The same UUID rule as request bodies (fields.ts), so a query id and a body id agree. */
export const isUuid: (s: string) => boolean = Schema.is(Uuid)

/**
 * A date or timestamp bound `name` of a query (a list filter, the OEE window): its instant, or its 422 detail:
 * DATE_FORMAT when it is none, and a year outside 0001 to 9999 (or an offset past either end) MIN_VALUE / MAX_VALUE
 * with the range, as a body's timestamp (DECISIONS: dates and timestamps).
 */
export const queryInstant = (name: string, v: string): number | ValidationDetail => {
  const t = readInstant(v)
  if (typeof t === "number") return t
  return detail("query", {}, [name], t, t === "DATE_FORMAT" ? `${name} must be an ISO 8601 date or timestamp` : isoRangeMessage(name), v)
}

/** Decodes a `?id=` parameter: missing is 422, not a UUID is 400. */
export const requireId = (raw: Readonly<Record<string, string>>, name = "id") =>
  Effect.gen(function*() {
    const id = raw[name]
    if (id === undefined || id === "") {
      return yield* failIfAny("query", [
        { field: name, message: `query parameter ${name} is required`, value: null, constraint: "NOT_NULL", entityType: "query", entityIndex: 0 }
      ]).pipe(Effect.as(""))
    }
    if (!isUuid(id)) return yield* new BadRequest({ message: `query parameter ${name} must be a UUID` })
    return id.toLowerCase()
  })

const parseInt10 = (name: string, v: string) =>
  INT_RE.test(v.trim()) ? Effect.succeed(Number(v)) : Effect.fail(new BadRequest({ message: `query parameter ${name} must be an integer` }))

/** `limit` of a page: 100 when absent, an integer (400 otherwise), and the details when it is not 1-1000. */
const pageLimit = (raw: string | undefined) =>
  Effect.map(raw === undefined ? Effect.succeed(100) : parseInt10("limit", raw), (limit) => ({
    limit,
    details: limit < 1
      ? [detail("query", {}, ["limit"], "MIN_VALUE", "limit must be at least 1", limit)]
      : limit > 1000
      ? [detail("query", {}, ["limit"], "MAX_VALUE", "limit must be at most 1000", limit)]
      : []
  }))

/** The `limit` query parameter of a paged read that is not a list (1-1000, default 100). */
export const decodeLimit = (raw: string | undefined) =>
  Effect.flatMap(pageLimit(raw), ({ details, limit }) => Effect.as(failIfAny("query", details), limit))

/** The 400 of a query parameter PostgreSQL cannot store (MCP's too, for text a URL cannot carry). */
export const unstorableParameter = (name: string) =>
  new BadRequest({ message: `query parameter ${name} contains a NUL character or an unpaired surrogate` })

export const decodeListQuery = <F extends Record<string, FilterKind>, S extends string>(
  spec: ListSpec<F, S>,
  input: Readonly<Record<string, string>>
): Effect.Effect<ListQuery<F, S>, BadRequest | import("./errors.ts").ValidationFailed> =>
  Effect.gen(function*() {
    const raw: Record<string, string> = { ...input }
    for (const [name, v] of Object.entries(raw)) {
      if (!isStorableText(v)) return yield* unstorableParameter(name)
    }
    for (const [alias, canonical] of Object.entries(spec.aliases ?? {})) {
      if (raw[alias] !== undefined && raw[canonical] === undefined) raw[canonical] = raw[alias]
    }
    const details: Array<ValidationDetail> = []
    const bad = (field: string, constraint: ValidationDetail["constraint"], message: string, value: unknown) =>
      details.push(detail("query", {}, [field], constraint, message, value))

    const { details: limitDetails, limit } = yield* pageLimit(raw.limit)
    details.push(...limitDetails)
    const offset = raw.offset === undefined ? 0 : yield* parseInt10("offset", raw.offset)
    if (offset < 0) bad("offset", "MIN_VALUE", "offset must be at least 0", offset)
    if (offset > INT4_MAX) bad("offset", "MAX_VALUE", `offset must be at most ${INT4_MAX}`, offset)

    const filters: Record<string, unknown> = {}
    for (const [name, kind] of Object.entries(spec.filters)) {
      const v = raw[name]
      if (v === undefined || v === "") continue
      switch (kind.kind) {
        case "text":
          filters[name] = v
          break
        case "uuid":
          if (!isUuid(v)) return yield* new BadRequest({ message: `query parameter ${name} must be a UUID` })
          filters[name] = v.toLowerCase()
          break
        case "int": {
          const n = yield* parseInt10(name, v)
          // integer columns: a value beyond their range matches nothing, but PostgreSQL would refuse it
          if (n < -INT4_MAX - 1 || n > INT4_MAX) bad(name, n > 0 ? "MAX_VALUE" : "MIN_VALUE", `${name} must be between ${-INT4_MAX - 1} and ${INT4_MAX}`, n)
          else filters[name] = n
          break
        }
        case "timestamp": {
          const t = queryInstant(name, v)
          if (typeof t === "number") filters[name] = new Date(t).toISOString()
          else details.push(t)
          break
        }
        case "bool":
          if (v !== "true" && v !== "false") return yield* new BadRequest({ message: `query parameter ${name} must be true or false` })
          filters[name] = v === "true"
          break
        case "enum":
          if (!kind.values.includes(v)) bad(name, "ENUM_CONSTRAINT", `${name} must be one of: ${kind.values.join(", ")}`, v)
          else filters[name] = v
      }
    }
    const sort = (raw.sort ?? spec.defaultSort) as S
    if (!spec.sort.includes(sort)) bad("sort", "ENUM_CONSTRAINT", `sort must be one of: ${spec.sort.join(", ")}`, sort)
    const order = raw.order ?? spec.defaultOrder ?? "desc"
    if (order !== "asc" && order !== "desc") bad("order", "ENUM_CONSTRAINT", "order must be one of: asc, desc", order)
    yield* failIfAny("query", details)
    return { filters: filters as ListQuery<F, S>["filters"], sort, order: order as "asc" | "desc", limit, offset }
  })

/** What a store returns for a list: one page of records as JSON built by the database, and the total matching. */
export type Slice<A> = JsonSlice<A>

/** A slice with the limit and offset that produced it (spec 4.15 pagination). */
export interface Page<A> extends Slice<A> {
  readonly limit: number
  readonly offset: number
}

export const toPage = (q: { readonly limit: number; readonly offset: number }) => <A>(s: Slice<A>): Page<A> => ({
  ...s,
  limit: q.limit,
  offset: q.offset
})

/** A list use case: decode the query (400/422), then ask the store for the caller's tenant. */
export const listWith = <F extends Record<string, FilterKind>, S extends string, A>(
  spec: ListSpec<F, S>,
  list: (tenantId: string, query: ListQuery<F, S>) => Effect.Effect<Slice<A>>
) =>
(raw: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const tenant = yield* CurrentTenant
    const q = yield* decodeListQuery(spec, raw)
    return toPage(q)(yield* list(tenant.id, q))
  })
