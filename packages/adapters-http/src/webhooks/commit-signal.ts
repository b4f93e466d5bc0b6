// Tells an in-process dispatcher that a write has committed, so new events go out at once instead
// of at the next poll. Optional on both sides: without it (another process delivers, or no
// dispatcher) the dispatcher simply polls.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export class CommitSignal extends Context.Service<CommitSignal, {
  /** Called by the HTTP pipeline after a write request succeeded (its transaction has committed). */
  readonly notify: Effect.Effect<void>
  /** Registers a wake-up; removed when the subscriber's scope closes. */
  readonly subscribe: (wake: Effect.Effect<void>) => Effect.Effect<void, never, import("effect").Scope.Scope>
}>()("mes/adapters-http/CommitSignal") {
  static readonly layer = Layer.sync(CommitSignal, () => {
    const listeners = new Set<Effect.Effect<void>>()
    return CommitSignal.of({
      notify: Effect.suspend(() => Effect.forEach(listeners, (wake) => wake, { discard: true })),
      subscribe: (wake) =>
        Effect.acquireRelease(Effect.sync(() => listeners.add(wake)), () => Effect.sync(() => listeners.delete(wake))).pipe(Effect.asVoid)
    })
  })
}
