// Response envelopes of spec 4.0 / 7.1 and DECISIONS, as schemas for the OpenAPI document and the typed client.
import * as Schema from "effect/Schema"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { type FilterKind, Int32, type ListSpec, NonNegativeInt } from "@mes/domain"

export const Pagination = Schema.Struct({ limit: Schema.Int, offset: Schema.Int, total: Schema.Int })

export const okEnvelope = <S extends Schema.Top>(data: S) => Schema.Struct({ success: Schema.Literal(true), data })

/** `data.<singular>` for create, read-one and update. */
export const one = <K extends string, S extends Schema.Top>(key: K, record: S) =>
  okEnvelope(Schema.Struct({ [key]: record } as { [k in K]: S }))

/** `data.<plural>` with `data.pagination` for lists. */
export const many = <K extends string, S extends Schema.Top>(key: K, record: S) =>
  okEnvelope(Schema.Struct({ [key]: Schema.Array(record), pagination: Pagination } as { [k in K]: Schema.$Array<S> } & { pagination: typeof Pagination }))

export const Deleted = okEnvelope(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }))

export const ValidationDetailSchema = Schema.Struct({
  field: Schema.String,
  message: Schema.String,
  value: Schema.Unknown,
  constraint: Schema.String,
  entityType: Schema.String,
  entityIndex: Schema.Int
})

const errorBody = <const C extends readonly [string, ...Array<string>]>(codes: C) =>
  Schema.Struct({
    success: Schema.Literal(false),
    error: Schema.Struct({
      code: Schema.Literals(codes),
      message: Schema.String,
      details: Schema.optionalKey(Schema.Array(ValidationDetailSchema)),
      statusCode: Schema.Int
    })
  })

export class BadRequestError extends Schema.Class<BadRequestError>("BadRequestError")(errorBody(["BAD_REQUEST"]).fields, { httpApiStatus: 400 }) {}
export class UnauthorizedError extends Schema.Class<UnauthorizedError>("UnauthorizedError")(errorBody(["UNAUTHORIZED"]).fields, { httpApiStatus: 401 }) {}
export class ForbiddenError extends Schema.Class<ForbiddenError>("ForbiddenError")(errorBody(["FORBIDDEN"]).fields, { httpApiStatus: 403 }) {}
export class NotFoundError extends Schema.Class<NotFoundError>("NotFoundError")(errorBody(["NOT_FOUND"]).fields, { httpApiStatus: 404 }) {}
export class ConflictError extends Schema.Class<ConflictError>("ConflictError")(errorBody(["CONFLICT", "INVALID_STATE_TRANSITION"]).fields, { httpApiStatus: 409 }) {}
export class ValidationError extends Schema.Class<ValidationError>("ValidationError")(errorBody(["VALIDATION_ERROR"]).fields, { httpApiStatus: 422 }) {}
/** PATCH with an If-Match that names an older version of the record. */
export class PreconditionFailedError extends Schema.Class<PreconditionFailedError>("PreconditionFailedError")(errorBody(["PRECONDITION_FAILED"]).fields, { httpApiStatus: 412 }) {}
/** The database cannot serve the request now (unavailable.ts) or the request outlived MES_REQUEST_TIMEOUT; comes with `Retry-After`. */
export class ServiceUnavailableError extends Schema.Class<ServiceUnavailableError>("ServiceUnavailableError")(errorBody(["SERVICE_UNAVAILABLE"]).fields, { httpApiStatus: 503 }) {}

/** A cloud tenant holds as many records of a kind as it may (webhooks: DECISIONS, Webhooks API). */
export class QuotaExceededError extends Schema.Class<QuotaExceededError>("QuotaExceededError")(errorBody(["QUOTA_EXCEEDED"]).fields, { httpApiStatus: 402 }) {}

/** The tenant's plan allows no more requests today (cloud mode, spec 8); comes with `Retry-After`. */
export class RateLimitError extends Schema.Class<RateLimitError>("RateLimitError")({
  success: Schema.Literal(false),
  error: Schema.Struct({
    code: Schema.Literal("RATE_LIMIT_EXCEEDED"),
    message: Schema.String,
    rateLimitInfo: Schema.Struct({ remaining: Schema.Int, resetAt: Schema.String, retryAfter: Schema.Int }),
    statusCode: Schema.Int
  })
}, { httpApiStatus: 429 }) {}

/**
 * Query schema for a list endpoint, derived from the domain's list spec (one source for both). The integers state the
 * bounds `decodeListQuery` keeps (the OpenAPI document and the MCP tools show them): an integer filter outside the
 * 32-bit integers is 422, an offset past 2147483647 too.
 */
export const listQuery = (spec: ListSpec<Record<string, FilterKind>, string>) => {
  const fields: Record<string, Schema.Top> = {}
  for (const [name, kind] of Object.entries(spec.filters)) {
    fields[name] = Schema.optionalKey(
      kind.kind === "int" ? Int32
      : kind.kind === "bool" ? Schema.Boolean
      : kind.kind === "uuid" ? Schema.String.check(Schema.isUUID())
      : kind.kind === "enum" ? Schema.Literals(kind.values as [string, ...Array<string>])
      : Schema.String
    )
  }
  for (const alias of Object.keys(spec.aliases ?? {})) fields[alias] = Schema.optionalKey(Schema.String)
  fields.sort = Schema.optionalKey(Schema.Literals(spec.sort as [string, ...Array<string>]))
  fields.order = Schema.optionalKey(Schema.Literals(["asc", "desc"]))
  fields.limit = Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })))
  fields.offset = Schema.optionalKey(NonNegativeInt)
  return fields
}

export const idQuery = { id: Schema.String.check(Schema.isUUID()) }

export const created = <S extends Schema.Top>(s: S) => s.pipe(HttpApiSchema.status(201))

/** The errors every endpoint may answer, in the spec 7.1 envelope. */
export const apiErrors = [BadRequestError, UnauthorizedError, ForbiddenError, NotFoundError, ConflictError, ValidationError, RateLimitError, ServiceUnavailableError] as const

/** A PATCH may also answer 412 (If-Match names an older version). */
export const patchErrors = [...apiErrors, PreconditionFailedError] as const

/** A create that a cloud tenant's quota can refuse may also answer 402. */
export const quotaErrors = [...apiErrors, QuotaExceededError] as const

/** GET (list or ?id=), POST, PATCH ?id=, DELETE ?id= on one spec path; `createErrors` when POST answers more. */
export const crud = <const G extends string, const P extends `/${string}`>(
  group: G,
  path: P,
  o: {
    singular: string
    plural: string
    record: Schema.Top
    listRecord?: Schema.Top
    readRecord?: Schema.Top
    list: Parameters<typeof listQuery>[0]
    create: Schema.Top
    createdSuccess?: Schema.Top
    patch: Schema.Top
    createErrors?: typeof quotaErrors
  }
) =>
  HttpApiGroup.make(group).add(
    HttpApiEndpoint.get("list", path, {
      query: listQuery(o.list),
      success: [many(o.plural, o.listRecord ?? o.record), one(o.singular, o.readRecord ?? o.record)],
      error: apiErrors
    }),
    HttpApiEndpoint.post("create", path, {
      payload: o.create as Schema.Codec<unknown, unknown>,
      success: created(o.createdSuccess ?? one(o.singular, o.record)),
      // typed as the wider list: the 402 of a group that has no quota is never answered
      error: (o.createErrors ?? apiErrors) as ReadonlyArray<typeof quotaErrors[number]>
    }),
    HttpApiEndpoint.patch("update", path, {
      query: idQuery,
      payload: o.patch as Schema.Codec<unknown, unknown>,
      success: one(o.singular, o.record),
      error: patchErrors
    }),
    HttpApiEndpoint.delete("remove", path, { query: idQuery, success: Deleted, error: apiErrors })
  )
