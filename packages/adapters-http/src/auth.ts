// Who is calling (spec 5): an integration key, the monthly task's cron secret or service key, or a signed-in
// user's session token (HS256 JWT signed with MES_JWT_SECRET, verified with jose). Each endpoint names which
// it takes (server.ts `accessOf`).
import { timingSafeEqual } from "node:crypto"
import * as Effect from "effect/Effect"
import { type CurrentTenant, Forbidden, KEY_PATTERN, type Tenants, Unauthorized } from "@mes/domain"
import type { Access } from "./server.ts"

type Caller = CurrentTenant["Service"]

/** Compares a presented secret with the configured one in time independent of where they differ. */
const sameSecret = (presented: string | undefined, configured: string | undefined) => {
  if (presented === undefined || configured === undefined) return false
  const a = Buffer.from(presented)
  const b = Buffer.from(configured)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** The monthly task acts for no tenant (spec 4.13). */
const SERVICE: Caller = { id: "", plan: "enterprise", via: "service" }

// jose is loaded on the first session token, not at start
let jose: Promise<typeof import("jose")> | undefined

/** The claims of a session token when its signature (HS256 only: `alg: none` is refused) and expiry hold. */
const verifySession = (token: string, secret: string) =>
  Effect.tryPromise(async () => {
    const { jwtVerify } = await (jose ??= import("jose"))
    const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
      algorithms: ["HS256"],
      requiredClaims: ["sub", "exp", "tenant_id", "role"]
    })
    return { sub: String(payload.sub), tenant_id: String(payload.tenant_id), role: String(payload.role) }
  }).pipe(Effect.mapError(() => new Unauthorized({ message: "Invalid or expired session token" })))

export interface Credentials {
  /** `Authorization: Bearer <value>`. */
  readonly bearer: string | undefined
  /** `X-API-Key`. */
  readonly apiKey: string | undefined
  readonly cronSecret: string | undefined
}

export const credentialsOf = (headers: Readonly<Record<string, string | undefined>>): Credentials => {
  const m = /^Bearer\s+(.+)$/i.exec(headers["authorization"]?.trim() ?? "")
  return {
    bearer: m === null ? undefined : m[1]!.trim(),
    apiKey: headers["x-api-key"]?.trim() || undefined,
    cronSecret: headers["x-cron-secret"]
  }
}

/** Resolves the caller of an endpoint with `access`: 401 for missing or invalid credentials, 403 for the wrong kind. */
export const authenticator = (
  tenants: Tenants["Service"],
  secrets: { readonly cronSecret: string | undefined; readonly serviceRoleKey: string | undefined; readonly jwtSecret: string | undefined }
) =>
(access: Access, c: Credentials): Effect.Effect<Caller, Unauthorized | Forbidden> => {
  if (access === "cron") {
    return sameSecret(c.cronSecret, secrets.cronSecret) || sameSecret(c.bearer, secrets.serviceRoleKey)
      ? Effect.succeed(SERVICE)
      : Effect.fail(new Unauthorized({ message: "Invalid or missing cron secret or service key" }))
  }
  const key = c.bearer ?? c.apiKey
  if (key === undefined) return Effect.fail(new Unauthorized({ message: "Invalid or missing API key" }))
  const byKey = tenants.authenticate(key).pipe(Effect.map((k): Caller => ({ id: k.tenantId, plan: k.plan, via: "api_key" })))
  // an integration key, or not a session token: the key rules (spec 5.7)
  if (access === "key" || KEY_PATTERN.test(key) || c.bearer === undefined) return byKey
  if (secrets.jwtSecret === undefined) return Effect.fail(new Unauthorized({ message: "Session tokens are not enabled (MES_JWT_SECRET is not set)" }))
  return verifySession(c.bearer, secrets.jwtSecret).pipe(
    Effect.flatMap(tenants.session),
    Effect.filterOrFail(
      (caller) => access !== "keyOrAdmin" || caller.role === "admin",
      () => new Forbidden({ message: "This requires a signed-in user with the admin role" })
    )
  )
}
