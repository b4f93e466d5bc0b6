import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"

/**
 * Provides the services the routes were built with to a request's handler, keeping the request's own `Scope`
 * (a scoped resource a handler acquires ends with its request, not at shutdown). Only the services the request's
 * fiber lacks or holds in another instance are added: the server's fiber already carries nearly all of them, and
 * `Effect.provideContext` copied the whole service map (≈ 80 entries) for every request.
 */
export const requestServices = <R>(context: Context.Context<R>) => {
  const entries = [...context.mapUnsafe].filter(([key]) => key !== Scope.Scope.key)
    .map(([key, service]) => [Context.Service<unknown>(key), service] as const)
  return <A, E>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E> =>
    Effect.updateContext(effect, (current: Context.Context<never>) => {
      let next = current as Context.Context<unknown>
      for (const [key, service] of entries) {
        if (Context.getOrUndefined(next, key) !== service) next = Context.add(next, key, service)
      }
      return next as Context.Context<R>
    })
}
