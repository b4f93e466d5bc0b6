// Write coalescing (ARCHITECTURE §2): the writes of concurrent requests that arrive while earlier ones are
// in flight travel together as one statement and one commit, the way a database groups commits.
import * as Config from "effect/Config"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { integerConfig } from "@mes/domain"

export interface Coalescing {
  /** Batches of one key in flight at once (0: every item alone, at once). */
  readonly slots: number
  /** The most items one batch takes. */
  readonly max: number
  /**
   * While batches of a key are in flight, another starts once half the key's items in progress wait, or this
   * many (default 1: at once). When none is in flight an item goes at once.
   */
  readonly min?: number
}

/** MES_DB_WRITE_SLOTS (default 4; 0 turns coalescing off), MES_DB_WRITE_BATCH (32) and MES_DB_WRITE_MIN (8). */
export const CoalescingConfig = Config.all({
  slots: integerConfig("MES_DB_WRITE_SLOTS", 4, { min: 0 }),
  max: integerConfig("MES_DB_WRITE_BATCH", 32, { min: 1 }),
  min: integerConfig("MES_DB_WRITE_MIN", 8, { min: 1 })
})

/**
 * Whether the items of a key that wait (`waiting`) start a batch now, beside `busy` batches in flight that carry
 * `items`: at once when none is in flight; beside batches in flight (fewer than `slots`), once they are half the
 * key's items in progress (in flight and waiting), or `min`. Pure, so that a bench's server without Effect
 * (bench/ideal-server.ts) coalesces by the same rule.
 */
export const batchDue = (options: Coalescing, busy: number, items: number, waiting: number) =>
  waiting > 0 &&
  (busy === 0 || (busy < options.slots && waiting >= Math.min(Math.max(1, options.min ?? 1), Math.ceil((items + waiting) / 2))))

/**
 * `submit(key, item)` answers what `run` answers for the item. `run` takes the items of one key that
 * waited together and answers one Exit per item, in order. No item waits for a timer: when no batch of its
 * key is in flight, an item goes at once (alone, at low load). While some are (fewer than `slots`), the waiting
 * items start another batch once they are half of the key's items in progress (in flight and waiting), or `min`;
 * otherwise they wait for a batch to finish. Either way they go together, at most `max`, so batches grow with
 * the load. Starting every lone item beside a full batch cost a statement, a commit and a connection each for
 * one create (at 32 connections 60 % of the statements carried one) and left the machine 30 % idle; at two
 * concurrent writers the rule still lets the second go at once. A waiting item whose caller is interrupted is
 * dropped; one already sent is written (as a statement already sent would be).
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
    /** Batches in flight, and the items they carry. */
    busy: number
    items: number
    readonly queue: Array<Waiting>
  }
  const lanes = new Map<K, Lane>()
  const due = (lane: Lane) => batchDue(options, lane.busy, lane.items, lane.queue.length)

  const launch = (key: K, lane: Lane): Effect.Effect<void> => {
    const batch = lane.queue.splice(0, options.max)
    lane.busy++
    lane.items += batch.length
    return run(key, batch.map((w) => w.item)).pipe(
      Effect.exit,
      Effect.flatMap((exit) => {
        for (let i = 0; i < batch.length; i++) {
          Deferred.doneUnsafe(batch[i]!.done, Exit.isSuccess(exit) ? exit.value[i]! : (exit as Exit.Exit<never>))
        }
        lane.busy--
        lane.items -= batch.length
        if (due(lane)) return Effect.asVoid(Effect.forkDetach(launch(key, lane)))
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
      if (lane === undefined) lanes.set(key, lane = { busy: 0, items: 0, queue: [] })
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
      return due(lane) ? Effect.andThen(Effect.forkDetach(launch(key, lane)), wait) : wait
    })
}
