// The domain services over the PostgreSQL stores over a fresh test database, for one test file: `run`
// executes an effect with them, `asTenant` supplies the caller's tenant.
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { afterAll, beforeAll } from "vitest"
import { CurrentTenant, DomainLive, UrlGuard } from "@mes/domain"
import { StoresPg, testDatabase } from "../src/index.ts"

export type Run = <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>

/** Builds the application before the file's tests (pool options as testDatabase takes them) and closes it after. */
export const useDomainApp = (pool: Parameters<typeof testDatabase>[0] = {}): Run => {
  let scope: Scope.Closeable
  let context: any
  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    const app = DomainLive.pipe(
      Layer.provideMerge(StoresPg),
      Layer.provideMerge(Layer.succeed(UrlGuard, UrlGuard.allowAll)),
      Layer.provideMerge(testDatabase(pool))
    )
    context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  })
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return (effect) => Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<any, any>)
}

export const asTenant = <A, E, R>(tenantId: string, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, CurrentTenant, { id: tenantId, plan: "free", via: "api_key" })
