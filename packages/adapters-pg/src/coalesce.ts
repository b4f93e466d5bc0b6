// Write coalescing (ARCHITECTURE §2): the writes of concurrent requests that arrive while earlier ones are
// in flight travel together as one statement and one commit, the way a database groups commits.
import * as Config from "effect/Config"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

export interface Coalescing {
  /** Batches of one key in flight at once; an item submitted while fewer are goes at once (0: every item alone). */
  readonly slots: number
  /** The most items one batch takes. */
  readonly max: number
}

/** MES_DB_WRITE_SLOTS (default 2; 0 turns coalescing off) and MES_DB_WRITE_BATCH (default 32). */
export const CoalescingConfig = Config.all({
  slots: Config.Int("MES_DB_WRITE_SLOTS").pipe(Config.withDefault(2)),
  max: Config.Int("MES_DB_WRITE_BATCH").pipe(Config.withDefault(32))
})

/**
 * `submit(key, item)` answers what `run` answers for the item. `run` takes the items of one key that
 * waited together and answers one Exit per item, in order. No item waits for a timer: while fewer than
 * `slots` batches of its key are in flight, an item goes at once (alone, at low load); otherwise it waits
 * for the first batch to finish and then goes with every item that waited meanwhile (at most `max`), so
 * batches grow with the load. A waiting item whose caller is interrupted is dropped; one already sent is
 * written (as a statement already sent would be).
 */
export const coalescing = <K, A, B, E>(
  options: Coalescing,
  run: (key: K, items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<Exit.Exit<B, E>>>
) => {
  interface Waiting {
    readonly item: A
    readonly done: Deferred.Deferred<B, E>
  }
  interface Lane {
    busy: number
    readonly queue: Array<Waiting>
  }
  const lanes = new Map<K, Lane>()

  const launch = (key: K, lane: Lane): Effect.Effect<void> => {
    const batch = lane.queue.splice(0, options.max)
    lane.busy++
    return run(key, batch.map((w) => w.item)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => {
        for (let i = 0; i < batch.length; i++) {
          Deferred.doneUnsafe(batch[i]!.done, Exit.isSuccess(exit) ? exit.value[i]! : (exit as Exit.Exit<never>))
        }
        lane.busy--
        if (lane.queue.length > 0) return Effect.asVoid(Effect.forkDetach(launch(key, lane)))
        if (lane.busy === 0) lanes.delete(key)
        return Effect.void
      }),
      Effect.uninterruptible
    )
  }

  // no slots: every item goes alone, at once
  if (options.slots <= 0) return (key: K, item: A): Effect.Effect<B, E> => Effect.flatMap(run(key, [item]), (exits) => exits[0]!)

  return (key: K, item: A): Effect.Effect<B, E> =>
    Effect.suspend(() => {
      let lane = lanes.get(key)
      if (lane === undefined) lanes.set(key, lane = { busy: 0, queue: [] })
      const waiting: Waiting = { item, done: Deferred.makeUnsafe<B, E>() }
      lane.queue.push(waiting)
      const wait = Deferred.await(waiting.done).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            const at = lane.queue.indexOf(waiting)
            if (at >= 0) lane.queue.splice(at, 1)
          })
        )
      )
      return lane.busy < options.slots ? Effect.andThen(Effect.forkDetach(launch(key, lane)), wait) : wait
    })
}
