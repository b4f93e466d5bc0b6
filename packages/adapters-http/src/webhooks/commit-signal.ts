// Tells an in-process dispatcher that a write has committed, so new events go out at once instead
// of at the next poll. Optional on both sides: without it (another process delivers, or no
// dispatcher) the dispatcher simply polls.
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A write request whose transaction has committed. */
export interface CommittedWrite {
  /** The caller's tenant; empty for the service-level caller, which acts for no tenant. */
  readonly tenantId: string
  /** The write went to the webhook endpoints: what the tenant subscribes to may have changed. */
  readonly webhooksChanged: boolean
}

export class CommitSignal extends Context.Service<CommitSignal, {
  /** Called by the HTTP pipeline after a write request succeeded (its transaction has committed). */
  readonly notify: (write: CommittedWrite) => Effect.Effect<void>
  /** Registers a wake-up; removed when the subscriber's scope closes. */
  readonly subscribe: (wake: (write: CommittedWrite) => Effect.Effect<void>) => Effect.Effect<void, never, import("effect").Scope.Scope>
}>()("mes/adapters-http/CommitSignal") {
  static readonly layer = Layer.sync(CommitSignal, () => {
    const listeners = new Set<(write: CommittedWrite) => Effect.Effect<void>>()
    return CommitSignal.of({
      notify: (write) => Effect.suspend(() => Effect.forEach(listeners, (wake) => wake(write), { discard: true })),
      subscribe: (wake) =>
        Effect.acquireRelease(Effect.sync(() => listeners.add(wake)), () => Effect.sync(() => listeners.delete(wake))).pipe(Effect.asVoid)
    })
  })
}
