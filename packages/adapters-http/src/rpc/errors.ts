// The errors mes answers, as tagged schema errors named like the domain's (packages/domain/src/errors.ts): what the
// RPC group fails with (serialized by their schemas) and what @mes/client's Effect client maps the REST envelope
// to. Each carries the REST envelope's `code`, `statusCode`, `message` (and `details` / `rateLimitInfo`), so one
// `Effect.catchTag("NotFound", …)` works in-process, over RPC and over REST. Loads no server code.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

/** A spec 7.3 validation detail. */
export const ErrorDetail = Schema.Struct({
  field: Schema.String,
  message: Schema.String,
  value: Schema.optionalKey(Schema.Unknown),
  constraint: Schema.String,
  entityType: Schema.optionalKey(Schema.String),
  entityIndex: Schema.optionalKey(Schema.Int)
})
export type ErrorDetail = typeof ErrorDetail.Type

/** Spec 8: what a caller past its plan's daily limit is told. */
export const RateLimitInfo = Schema.Struct({ remaining: Schema.Int, resetAt: Schema.String, retryAfter: Schema.Int })

const fixed = <const L extends string | number>(value: L) =>
  Schema.Literal(value).pipe(Schema.withConstructorDefault(Effect.succeed(value)))

/** The envelope's fields with the code and status fixed: `new NotFound({ message })`. */
const body = <const C extends string, const S extends number>(code: C, statusCode: S) => ({
  code: fixed(code),
  statusCode: fixed(statusCode),
  message: Schema.String,
  details: Schema.optionalKey(Schema.Array(ErrorDetail))
})

/** 400: malformed JSON or query parameters. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", body("BAD_REQUEST", 400)) {}
/** 401: a missing or unknown API key. */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", body("UNAUTHORIZED", 401)) {}
/** 402: a plan limit reached. */
export class QuotaExceeded extends Schema.TaggedError<QuotaExceeded>()("QuotaExceeded", body("QUOTA_EXCEEDED", 402)) {}
/** 403: a record of another tenant, or a role that may not do this. */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", body("FORBIDDEN", 403)) {}
/** 404: no such record (or route). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", body("NOT_FOUND", 404)) {}
/** 409: a duplicate, or a delete refused because of dependants. */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", body("CONFLICT", 409)) {}
/** 409: a lifecycle move the record's status does not allow. */
export class InvalidStateTransition extends Schema.TaggedError<InvalidStateTransition>()("InvalidStateTransition", body("INVALID_STATE_TRANSITION", 409)) {}
/** 412: If-Match names an older version of the record. */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()("PreconditionFailed", body("PRECONDITION_FAILED", 412)) {}
/** 422: well-formed but invalid data, with spec 7.3 `details`. */
export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", body("VALIDATION_ERROR", 422)) {}
/** 429: the plan's daily request limit (cloud mode), with `rateLimitInfo`. */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  ...body("RATE_LIMIT_EXCEEDED", 429),
  rateLimitInfo: Schema.optionalKey(RateLimitInfo)
}) {}
/** 503: the database cannot serve the request now (unreachable, read-only, out of resources, it gave up on the statement) or the request outlived MES_REQUEST_TIMEOUT; retry later (REST says when in `Retry-After`). */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", body("SERVICE_UNAVAILABLE", 503)) {}
/** 500: an error the server reports in its envelope (e.g. a failed monthly reset). */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", body("INTERNAL_ERROR", 500)) {}

/** Every error of mes, by the envelope's `code`. */
export interface MesErrorByCode {
  readonly BAD_REQUEST: BadRequest
  readonly UNAUTHORIZED: Unauthorized
  readonly QUOTA_EXCEEDED: QuotaExceeded
  readonly FORBIDDEN: Forbidden
  readonly NOT_FOUND: NotFound
  readonly CONFLICT: Conflict
  readonly INVALID_STATE_TRANSITION: InvalidStateTransition
  readonly PRECONDITION_FAILED: PreconditionFailed
  readonly VALIDATION_ERROR: ValidationFailed
  readonly RATE_LIMIT_EXCEEDED: RateLimited
  readonly SERVICE_UNAVAILABLE: ServiceUnavailable
  readonly INTERNAL_ERROR: InternalError
}
export type MesErrorCode = keyof MesErrorByCode
export type MesError = MesErrorByCode[MesErrorCode]

const classes: { readonly [C in MesErrorCode]: new(props: { readonly message: string; readonly details?: ReadonlyArray<ErrorDetail> }) => MesErrorByCode[C] } = {
  BAD_REQUEST: BadRequest,
  UNAUTHORIZED: Unauthorized,
  QUOTA_EXCEEDED: QuotaExceeded,
  FORBIDDEN: Forbidden,
  NOT_FOUND: NotFound,
  CONFLICT: Conflict,
  INVALID_STATE_TRANSITION: InvalidStateTransition,
  PRECONDITION_FAILED: PreconditionFailed,
  VALIDATION_ERROR: ValidationFailed,
  RATE_LIMIT_EXCEEDED: RateLimited,
  SERVICE_UNAVAILABLE: ServiceUnavailable,
  INTERNAL_ERROR: InternalError
}

/** The schema of every mes error (the RPC group's error). */
export const MesError = Schema.Union([
  BadRequest,
  Unauthorized,
  QuotaExceeded,
  Forbidden,
  NotFound,
  Conflict,
  InvalidStateTransition,
  PreconditionFailed,
  ValidationFailed,
  RateLimited,
  ServiceUnavailable,
  InternalError
])

const tags: ReadonlySet<string> = new Set(MesError.members.map((m) => m.identifier))

/** Whether a value is one of the errors above (after a Promise rejection, say). */
export const isMesError = (u: unknown): u is MesError =>
  typeof u === "object" && u !== null && typeof (u as { _tag?: unknown })._tag === "string" &&
  tags.has((u as { _tag: string })._tag) && typeof (u as { code?: unknown }).code === "string"

/** The error envelope's `error` (REST) as its tagged error; an unknown code is kept as an InternalError. */
export const fromEnvelope = (error: {
  readonly code: string
  readonly message: string
  readonly details?: ReadonlyArray<ErrorDetail> | undefined
  readonly rateLimitInfo?: typeof RateLimitInfo.Type | undefined
}): MesError => {
  const props = { message: error.message, ...(error.details !== undefined ? { details: error.details } : {}) }
  if (error.code === "RATE_LIMIT_EXCEEDED") {
    return new RateLimited({ ...props, ...(error.rateLimitInfo !== undefined ? { rateLimitInfo: error.rateLimitInfo } : {}) })
  }
  const make = (classes as Record<string, (typeof classes)[MesErrorCode]>)[error.code]
  return make !== undefined ? new make(props) : new InternalError({ message: `${error.code}: ${error.message}` })
}
