// User session tokens (spec 5.4; DECISIONS: process and bootstrap): HS256 JWTs signed with
// MES_JWT_SECRET, claims sub (profile id), tenant_id, role, iat, exp.
import { SignJWT } from "jose"
import { DEFAULT_TOKEN_TTL_SECONDS } from "./token-ttl.ts"

export type SessionRole = "admin" | "operator"

export interface SessionClaims {
  /** The profile id. */
  readonly sub: string
  readonly tenant_id: string
  readonly role: SessionRole
}


/** Signs a session token; returns the compact JWT and its expiry (seconds since the epoch). */
export const signSessionToken = async (
  claims: SessionClaims,
  secret: string,
  ttlSeconds: number = DEFAULT_TOKEN_TTL_SECONDS,
  now: number = Math.floor(Date.now() / 1000)
): Promise<{ token: string; exp: number }> => {
  const exp = now + ttlSeconds
  const token = await new SignJWT({ tenant_id: claims.tenant_id, role: claims.role })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuedAt(now)
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(secret))
  return { token, exp }
}
