// Tenant bootstrap and API-key authentication (spec 5; DECISIONS: process and bootstrap).
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import { durationConfig } from "../durations.ts"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { NotFound, Unauthorized } from "../errors.ts"
import { newId, Tx } from "../ports.ts"
import { constantTimeEqual, generateApiKey, KEY_PATTERN, keyPrefix, sha256Hex } from "./keys.ts"
import type { Plan, Tenant } from "./schema.ts"
import { TenantStore } from "./store.ts"

export interface Caller {
  readonly tenantId: string
  readonly plan: Plan
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
  /** On a database with no tenant yet, creates one (like `create`); otherwise nothing. */
  readonly bootstrap: (name: string) => Effect.Effect<{ tenant: Tenant; apiKey: string } | undefined>
  /** Resolves a presented key to its tenant, or Unauthorized (spec 5.7). */
  readonly authenticate: (key: string) => Effect.Effect<Caller, Unauthorized>
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
        yield* store.insertKey({ id: newId(), tenant_id: tenantId, key_prefix: keyPrefix(key), key_hash: hash, environment, name })
        return key
      })

    const get = (tenantId: string) =>
      store.get(tenantId).pipe(
        Effect.flatMap((t) => (t === undefined ? Effect.fail(new NotFound({ entity: "tenant", id: tenantId })) : Effect.succeed(t)))
      )

    const create = ({ name, plan }: { name: string; plan?: Plan }) =>
      tx.transaction(Effect.gen(function*() {
        const tenant = yield* store.insert({ id: newId(), name, plan: plan ?? "free" })
        const apiKey = yield* issueKey(tenant.id, "live", "initial")
        return { tenant, apiKey }
      }))

    return Tenants.of({
      create,
      bootstrap: (name) =>
        store.any().pipe(Effect.flatMap((exists) => (exists ? Effect.succeed(undefined) : create({ name })))),
      createKey: (tenantId, options = {}) =>
        get(tenantId).pipe(Effect.andThen(issueKey(tenantId, options.test ? "test" : "live", options.name ?? null))),
      get,
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
          const candidates = yield* store.keysByPrefix(keyPrefix(key))
          let match: Caller | undefined
          for (const c of candidates) {
            if (constantTimeEqual(c.key_hash, hash) && c.tenant_status === "active") {
              match = { tenantId: c.tenant_id, plan: c.plan }
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
