// Domain error → (HTTP status, code) in one place, in spec 7.4 order (ARCHITECTURE: errors).
import type { DomainError, ValidationDetail } from "@mes/domain"

export interface ErrorEnvelope {
  readonly success: false
  readonly error: {
    readonly code: string
    readonly message: string
    readonly details?: ReadonlyArray<ValidationDetail>
    readonly rateLimitInfo?: { readonly remaining: number; readonly resetAt: string; readonly retryAfter: number }
    readonly statusCode: number
  }
}

export const errorEnvelope = (
  statusCode: number,
  code: string,
  message: string,
  details?: ReadonlyArray<ValidationDetail>
): ErrorEnvelope => ({
  success: false,
  error: details === undefined ? { code, message, statusCode } : { code, message, details, statusCode }
})

const statusOf: Record<DomainError["_tag"], readonly [number, string]> = {
  BadRequest: [400, "BAD_REQUEST"],
  Unauthorized: [401, "UNAUTHORIZED"],
  QuotaExceeded: [402, "QUOTA_EXCEEDED"],
  Forbidden: [403, "FORBIDDEN"],
  NotFound: [404, "NOT_FOUND"],
  Conflict: [409, "CONFLICT"],
  InvalidStateTransition: [409, "INVALID_STATE_TRANSITION"],
  PreconditionFailed: [412, "PRECONDITION_FAILED"],
  ValidationFailed: [422, "VALIDATION_ERROR"],
  RateLimited: [429, "RATE_LIMIT_EXCEEDED"]
}

export const fromDomainError = (e: DomainError): ErrorEnvelope => {
  const [status, code] = statusOf[e._tag]
  if (e._tag === "RateLimited") {
    const { remaining, resetAt, retryAfter } = e.info
    return { success: false, error: { code, message: e.message, rateLimitInfo: { remaining, resetAt, retryAfter }, statusCode: status } }
  }
  return errorEnvelope(status, code, e.message, e._tag === "ValidationFailed" ? e.details : undefined)
}
