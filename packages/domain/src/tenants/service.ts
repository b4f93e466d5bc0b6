// Tenant bootstrap and API-key authentication (spec 5; DECISIONS: process and bootstrap).
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import { durationConfig } from "../durations.ts"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { readOwned } from "../crud.ts"
import { type BadRequest, type Forbidden, NotFound, Unauthorized, type ValidationFailed } from "../errors.ts"
import type { JsonText } from "../json.ts"
import { CurrentTenant, newId, Tx } from "../ports.ts"
import { isUuid, listWith, type Page } from "../query.ts"
import { decodeInput } from "../validation.ts"
import { constantTimeEqual, generateApiKey, KEY_PATTERN, keyPrefix, sha256Hex } from "./keys.ts"
import { type ApiKey, ApiKeyCreate, apiKeyListSpec, type Plan, type Tenant } from "./schema.ts"
import { TenantStore } from "./store.ts"

/** What a session token (HS256 JWT, MES_JWT_SECRET) says: profile id, tenant id and role. */
export interface SessionClaims {
  readonly sub: string
  readonly tenant_id: string
  readonly role: string
}

const INVALID_SESSION = "Invalid or expired session token"

export interface Caller {
  readonly tenantId: string
  readonly plan: Plan
  /** The id of the key that authenticated. */
  readonly keyId: string
}

/** What POST /api-key-generate answers: the key in clear (this once) and its listing. */
export interface GeneratedKey {
  readonly api_key: string
  readonly key: JsonText<ApiKey>
}

const INVALID_KEY = "Invalid or missing API key"

/**
 * How long a verified key is trusted without asking the database (DECISIONS: authentication
 * cache): a revoked key, or a key of a suspended tenant, stops working within this time.
 * `MES_AUTH_CACHE_TTL=0` asks the database on every request; `30s`, `5m` or `30 seconds` set the time.
 */
export const AuthCacheTtl = durationConfig("MES_AUTH_CACHE_TTL", Duration.seconds(30))

/** At most this many keys are remembered; the oldest entry goes first. */
const AUTH_CACHE_CAPACITY = 10_000

export class Tenants extends Context.Service<Tenants, {
  /** Creates an active tenant with a first live API key; returns the key in clear, once. */
  readonly create: (input: { name: string; plan?: Plan }) => Effect.Effect<{ tenant: Tenant; apiKey: string }>
  /** Issues another key for the tenant; `svc_test_` when test is true. */
  readonly createKey: (tenantId: string, options?: { test?: boolean; name?: string }) => Effect.Effect<string, NotFound>
  readonly get: (tenantId: string) => Effect.Effect<Tenant, NotFound>
  /** Every tenant of the database, the oldest first (`mes tenant list`: an operator's, not an API's). */
  readonly list: () => Effect.Effect<ReadonlyArray<Tenant>>
  /** On a database with no tenant yet, creates one (like `create`); otherwise nothing. */
  readonly bootstrap: (name: string) => Effect.Effect<{ tenant: Tenant; apiKey: string } | undefined>
  /** Resolves a presented key to its tenant, or Unauthorized (spec 5.7). */
  readonly authenticate: (key: string) => Effect.Effect<Caller, Unauthorized>
  /**
   * The caller a verified session token names (spec 5.4): its tenant must be active and its profile exist there
   * and be active; the role is admin only when both the token and the profile say so (a demoted admin's token
   * stops being one at once).
   */
  readonly session: (claims: SessionClaims) => Effect.Effect<CurrentTenant["Service"], Unauthorized>
  /** Changes a tenant's plan (its keys see it within the auth cache's bound). */
  readonly setPlan: (tenantId: string, plan: Plan) => Effect.Effect<Tenant, NotFound>
  /** POST /api-key-generate `{name?, environment}`: a new key of the caller's tenant. */
  readonly generateKey: (input: unknown) => Effect.Effect<GeneratedKey, ValidationFailed, CurrentTenant>
  /** GET /api-key-generate: the caller's tenant's keys, never a secret or hash. */
  readonly listKeys: (query: Readonly<Record<string, string>>) => Effect.Effect<Page<ApiKey>, BadRequest | ValidationFailed, CurrentTenant>
  /** DELETE /api-key-generate?id=: revokes the key here at once, in other processes within the auth cache's bound. */
  readonly revokeKey: (id: string) => Effect.Effect<JsonText<ApiKey>, NotFound | Forbidden, CurrentTenant>
}>()("mes/domain/Tenants") {
  static readonly layer = Layer.effect(Tenants, Effect.gen(function*() {
    const store = yield* TenantStore
    const tx = yield* Tx
    const ttlMillis = Duration.toMillis(yield* AuthCacheTtl)
    // presented key → caller and when the entry stops counting; only verified keys are kept. Keyed
    // by the key itself, so a warm key costs no hashing either (Web Crypto's SHA-256 measured
    // 0.3 ms of CPU per request under load); the database still only ever sees the hash.
    const verified = new Map<string, { readonly caller: Caller; readonly until: number }>()

    const issueKey = (tenantId: string, environment: "live" | "test", name: string | null) =>
      Effect.gen(function*() {
        const key = generateApiKey(environment)
        const hash = yield* Effect.promise(() => sha256Hex(key))
        const record = yield* store.insertKey({ id: newId(), tenant_id: tenantId, key_prefix: keyPrefix(key), key_hash: hash, environment, name })
        return { api_key: key, key: record }
      })
    const decodeKeyCreate = decodeInput(ApiKeyCreate, "api_key")

    const get = (tenantId: string) =>
      store.get(tenantId).pipe(
        Effect.flatMap((t) => (t === undefined ? Effect.fail(new NotFound({ entity: "tenant", id: tenantId })) : Effect.succeed(t)))
      )

    const create = ({ name, plan }: { name: string; plan?: Plan }) =>
      tx.transaction(Effect.gen(function*() {
        const tenant = yield* store.insert({ id: newId(), name, plan: plan ?? "free" })
        const { api_key } = yield* issueKey(tenant.id, "live", "initial")
        return { tenant, apiKey: api_key }
      }))

    return Tenants.of({
      create,
      bootstrap: (name) =>
        store.any().pipe(Effect.flatMap((exists) => (exists ? Effect.succeed(undefined) : create({ name })))),
      createKey: (tenantId, options = {}) =>
        get(tenantId).pipe(
          Effect.andThen(issueKey(tenantId, options.test ? "test" : "live", options.name ?? null)),
          Effect.map((k) => k.api_key)
        ),
      session: (claims) =>
        Effect.gen(function*() {
          const row = isUuid(claims.tenant_id) && isUuid(claims.sub) ? yield* store.sessionOf(claims.tenant_id, claims.sub) : undefined
          if (row === undefined || row.tenant_status !== "active" || row.profile_role === null || row.profile_active !== true) {
            return yield* new Unauthorized({ message: INVALID_SESSION })
          }
          const role = claims.role === "admin" && row.profile_role === "admin" ? "admin" as const : "operator" as const
          return { id: claims.tenant_id, plan: row.plan, via: "user" as const, role }
        }),
      setPlan: (tenantId, plan) =>
        store.setPlan(tenantId, plan).pipe(
          Effect.flatMap((t) => (t === undefined ? Effect.fail(new NotFound({ entity: "tenant", id: tenantId })) : Effect.succeed(t)))
        ),
      generateKey: (input) =>
        Effect.gen(function*() {
          const tenant = yield* CurrentTenant
          const { environment, name } = yield* decodeKeyCreate(input)
          return yield* issueKey(tenant.id, environment, name ?? null)
        }),
      listKeys: listWith(apiKeyListSpec, store.listKeys),
      revokeKey: (id) =>
        readOwned("api_keys", id, (tenantId) => store.revokeKey(tenantId, id)).pipe(
          // this process stops trusting the key at once; others when their cache entry expires
          Effect.tap(() => Effect.sync(() => {
            for (const [key, entry] of verified) if (entry.caller.keyId === id) verified.delete(key)
          }))
        ),
      get,
      list: store.list,
      authenticate: (key) =>
        Effect.gen(function*() {
          if (!KEY_PATTERN.test(key)) return yield* new Unauthorized({ message: INVALID_KEY })
          const now = Date.now()
          const cached = verified.get(key)
          if (cached !== undefined) {
            if (cached.until > now) return cached.caller
            verified.delete(key)
          }
          const hash = yield* Effect.promise(() => sha256Hex(key))
          const candidates = yield* store.keysByPrefix(keyPrefix(key), hash)
          let match: Caller | undefined
          for (const c of candidates) {
            if (constantTimeEqual(c.key_hash, hash) && c.tenant_status === "active") {
              match = { tenantId: c.tenant_id, plan: c.plan, keyId: c.id }
            }
          }
          if (match === undefined) return yield* new Unauthorized({ message: INVALID_KEY })
          if (ttlMillis > 0) {
            if (verified.size >= AUTH_CACHE_CAPACITY) verified.delete(verified.keys().next().value!)
            verified.set(key, { caller: match, until: now + ttlMillis })
          }
          return match
        })
    })
  }))
}
