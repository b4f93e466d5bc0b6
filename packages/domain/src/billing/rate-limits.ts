// Plan limits of the hosted cloud (spec 8; DECISIONS: MES_DEPLOYMENT): requests per tenant per UTC day.
// Self-hosted deployments have none: nothing is counted and no header is sent.
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RateLimited, type RateLimitInfo } from "../errors.ts"
import type { Plan } from "../tenants/schema.ts"

/** Requests per UTC day by plan; enterprise is unlimited. */
export const DAILY_REQUESTS: Readonly<Record<Plan, number | undefined>> = {
  free: 100,
  pro: 1_000,
  premium: 10_000,
  enterprise: undefined
}

/** MES_DEPLOYMENT: `self-hosted` (default) or `cloud` (plan limits, the webhook SSRF guard). */
export const DeploymentConfig = Config.Literals(["self-hosted", "cloud"], "MES_DEPLOYMENT").pipe(Config.withDefault("self-hosted" as const))
export type Deployment = typeof DeploymentConfig extends Config.Config<infer A> ? A : never

export class RequestCounter extends Context.Service<RequestCounter, {
  /**
   * Counts one request of the tenant on `day` (YYYY-MM-DD, UTC), across every process on the database,
   * and answers the day's count including it. Runs on its own, never inside a request's transaction.
   */
  readonly count: (tenantId: string, day: string) => Effect.Effect<number>
}>()("mes/domain/RequestCounter") {}

const DAY_MS = 86_400_000

/** The UTC day of `now` and the instant the next one starts. */
export const utcDay = (now: number) => {
  const start = now - (now % DAY_MS)
  return { day: new Date(start).toISOString().slice(0, 10), resetAt: start + DAY_MS }
}

export class RateLimits extends Context.Service<RateLimits, {
  /**
   * Admits one request of the tenant: its limit state after counting it, undefined when its plan is
   * unlimited (or the deployment is self-hosted), RateLimited past the limit.
   */
  readonly admit: (tenant: { readonly id: string; readonly plan: Plan }) => Effect.Effect<RateLimitInfo | undefined, RateLimited>
}>()("mes/domain/RateLimits") {
  /** No limits and no counting (self-hosted, or an embedder that provides no RateLimits). */
  static readonly unlimited = RateLimits.of({ admit: () => Effect.succeed(undefined) })
  static readonly none = Layer.succeed(RateLimits, RateLimits.unlimited)

  /** Cloud: every tenant's requests are counted per UTC day against its plan. */
  static readonly cloud = Layer.effect(RateLimits, Effect.gen(function*() {
    const counter = yield* RequestCounter
    // tenants known to be past their limit, until when: their requests are refused without a round trip
    // (and at which limit: a changed plan counts again)
    const exhausted = new Map<string, { readonly until: number; readonly limit: number }>()
    const info = (limit: number, count: number, resetAt: number, now: number): RateLimitInfo => ({
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: new Date(resetAt).toISOString(),
      retryAfter: Math.max(1, Math.ceil((resetAt - now) / 1000))
    })
    return RateLimits.of({
      admit: (tenant) =>
        Effect.gen(function*() {
          const limit = DAILY_REQUESTS[tenant.plan]
          if (limit === undefined) return undefined
          const now = Date.now()
          const { day, resetAt } = utcDay(now)
          const known = exhausted.get(tenant.id)
          if (known !== undefined) {
            if (known.until > now && known.limit === limit) return yield* new RateLimited({ info: info(limit, limit, known.until, now) })
            exhausted.delete(tenant.id)
          }
          const count = yield* counter.count(tenant.id, day)
          if (count > limit) {
            exhausted.set(tenant.id, { until: resetAt, limit })
            return yield* new RateLimited({ info: info(limit, count, resetAt, now) })
          }
          return info(limit, count, resetAt, now)
        })
    })
  }))

  /** By MES_DEPLOYMENT: `cloud` limits, anything else (default `self-hosted`) does not. */
  static readonly layer = Layer.unwrap(Effect.map(DeploymentConfig, (d) => d === "cloud" ? RateLimits.cloud : RateLimits.none))
}
