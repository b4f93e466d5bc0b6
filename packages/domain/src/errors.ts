// Domain errors named after the spec's error codes (spec 7.2). They carry what the
// envelope needs and no HTTP status: adapters map them once, in spec 7.4 order.
import * as Data from "effect/Data"
import type { ValidationDetail } from "./validation.ts"

export type EntityType = "job" | "part" | "operation" | "cell" | "profile" | "tenant" | "api_key" | "query"

/** Malformed JSON or query parameters (400). */
export class BadRequest extends Data.TaggedError("BadRequest")<{ readonly message: string }> {}

/** Missing or invalid credentials (401). */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{ readonly message: string }> {}

/** A record of another tenant, or a role that may not do this (403). */
export class Forbidden extends Data.TaggedError("Forbidden")<{ readonly message: string }> {}

/** No such record in any tenant (404). */
export class NotFound extends Data.TaggedError("NotFound")<{ readonly entity: string; readonly id: string }> {
  override get message() {
    return `${this.entity} ${this.id} not found`
  }
}

/** Duplicates and deletes refused because of dependants (409). */
export class Conflict extends Data.TaggedError("Conflict")<{ readonly message: string; readonly field?: string }> {}

/** Well-formed but invalid data (422), with spec 7.3 details. */
export class ValidationFailed extends Data.TaggedError("ValidationFailed")<{
  readonly message: string
  readonly details: ReadonlyArray<ValidationDetail>
}> {}

/** A lifecycle precondition failed (409, spec 3 + DECISIONS). */
export class InvalidStateTransition extends Data.TaggedError("InvalidStateTransition")<{
  readonly entity: string
  readonly current: string
  readonly required: ReadonlyArray<string>
  readonly action: string
}> {
  override get message() {
    const required = this.required.length === 0
      ? "no status allows it"
      : `must be ${this.required.map((s) => `'${s}'`).join(" or ")}`
    return `Cannot ${this.action} ${this.entity}: status is '${this.current}', ${required}`
  }
}

/** The record changed since the version the client names in If-Match (412). */
export class PreconditionFailed extends Data.TaggedError("PreconditionFailed")<{ readonly message: string }> {}

/** Plan limit reached (402). */
export class QuotaExceeded extends Data.TaggedError("QuotaExceeded")<{ readonly message: string }> {}

/** What a client past its plan's request limit is told (spec 8: `error.rateLimitInfo`). */
export interface RateLimitInfo {
  /** Requests the plan allows per UTC day. */
  readonly limit: number
  readonly remaining: number
  /** When the count starts again (the next UTC midnight), ISO 8601. */
  readonly resetAt: string
  /** Seconds until then. */
  readonly retryAfter: number
}

/** The tenant's plan allows no more requests today (429, spec 8). */
export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly info: RateLimitInfo }> {
  override get message() {
    return `Daily request limit of ${this.info.limit} reached; it resets at ${this.info.resetAt}`
  }
}

export type DomainError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | ValidationFailed
  | InvalidStateTransition
  | PreconditionFailed
  | QuotaExceeded
  | RateLimited
