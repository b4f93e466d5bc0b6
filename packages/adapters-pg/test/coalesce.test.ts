// Write coalescing (coalesce.ts): which items travel together, and that every caller gets its own answer.
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { describe, expect, it } from "vitest"
import { coalescing } from "../src/coalesce.ts"

/** A coalescer whose batches are recorded and each held until `release` is called. */
const recording = (options: { slots: number; max: number; min?: number }, answer = (item: number): Exit.Exit<string, string> => Exit.succeed(`#${item}`)) => {
  const batches: Array<Array<string>> = []
  const gates: Array<Deferred.Deferred<void>> = []
  const submit = coalescing(options, (key: string, items: ReadonlyArray<number>) =>
    Effect.gen(function*() {
      batches.push(items.map((i) => `${key}${i}`))
      const gate = Deferred.makeUnsafe<void>()
      gates.push(gate)
      yield* Deferred.await(gate)
      return items.map(answer)
    }))
  const release = () => Effect.forEach(gates.splice(0), (g) => Deferred.succeed(g, undefined))
  return { batches, gates, submit, release }
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
/** Lets every forked fiber run as far as it can (the scheduler is cooperative: no timing involved). */
const settle = Effect.forEach(Array.from({ length: 20 }), () => Effect.yieldNow, { discard: true })

describe("coalescing", () => {
  it("an item goes at once while a slot is free; those that wait meanwhile go together, at most `max` each", () =>
    run(Effect.gen(function*() {
      const c = recording({ slots: 1, max: 3 })
      const fibers = [yield* Effect.forkChild(c.submit("a", 1))]
      yield* settle
      expect(c.batches).toEqual([["a1"]])
      for (const i of [2, 3, 4, 5, 6]) fibers.push(yield* Effect.forkChild(c.submit("a", i)))
      yield* settle
      expect(c.batches).toEqual([["a1"]])
      // each release lets the next batch go: the four that waited, three at most
      while (c.batches.length < 3) {
        yield* c.release()
        yield* settle
      }
      yield* c.release()
      const answers = yield* Fiber.joinAll(fibers)
      expect(c.batches).toEqual([["a1"], ["a2", "a3", "a4"], ["a5", "a6"]])
      expect(answers).toEqual(["#1", "#2", "#3", "#4", "#5", "#6"])
    })))

  it("with `min` 1 a second batch starts beside the first as soon as an item waits", () =>
    run(Effect.gen(function*() {
      const c = recording({ slots: 2, max: 10 })
      const fibers = []
      for (const i of [1, 2, 3, 4]) {
        fibers.push(yield* Effect.forkChild(c.submit("a", i)))
        yield* settle
      }
      expect(c.batches).toEqual([["a1"], ["a2"]])
      yield* c.release()
      yield* settle
      yield* c.release()
      expect(yield* Fiber.joinAll(fibers)).toEqual(["#1", "#2", "#3", "#4"])
      expect(c.batches).toEqual([["a1"], ["a2"], ["a3", "a4"]])
    })))

  it("beside batches in flight another starts once half the items in progress wait, or `min`; the rest wait", () =>
    run(Effect.gen(function*() {
      const c = recording({ slots: 4, max: 10, min: 3 })
      const fibers: Array<Fiber.Fiber<string, string>> = []
      const submit = function*(i: number) {
        fibers.push(yield* Effect.forkChild(c.submit("a", i)))
        yield* settle
      }
      // nothing in flight: the first goes at once; the second is half of the two in progress, so it goes too
      yield* submit(1)
      yield* submit(2)
      expect(c.batches).toEqual([["a1"], ["a2"]])
      // the third is one of three in progress, short of half: it waits, and goes with the fourth
      yield* submit(3)
      expect(c.batches).toEqual([["a1"], ["a2"]])
      yield* submit(4)
      expect(c.batches).toEqual([["a1"], ["a2"], ["a3", "a4"]])
      // of seven in progress half would be four; `min` caps it at three
      yield* submit(5)
      yield* submit(6)
      expect(c.batches.length).toBe(3)
      yield* submit(7)
      expect(c.batches).toEqual([["a1"], ["a2"], ["a3", "a4"], ["a5", "a6", "a7"]])
      // every slot taken: the eighth waits; as batches finish it stays short of half of what is in progress,
      // and goes when none is in flight
      yield* submit(8)
      for (let left = 3; left >= 1; left--) {
        const [next] = c.gates.splice(0, 1)
        yield* Deferred.succeed(next!, undefined)
        yield* settle
        expect(c.batches.length).toBe(4)
      }
      yield* c.release()
      yield* settle
      expect(c.batches).toEqual([["a1"], ["a2"], ["a3", "a4"], ["a5", "a6", "a7"], ["a8"]])
      yield* c.release()
      expect(yield* Fiber.joinAll(fibers)).toEqual(["#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8"])
    })))

  it("keys do not share batches or slots", () =>
    run(Effect.gen(function*() {
      const c = recording({ slots: 1, max: 10 })
      const fibers = []
      for (const [key, i] of [["a", 1], ["b", 1], ["a", 2], ["b", 2], ["a", 3]] as const) {
        fibers.push(yield* Effect.forkChild(c.submit(key, i)))
        yield* settle
      }
      expect(c.batches).toEqual([["a1"], ["b1"]])
      while (c.batches.length < 4) {
        yield* c.release()
        yield* settle
      }
      yield* c.release()
      expect(yield* Fiber.joinAll(fibers)).toEqual(["#1", "#1", "#2", "#2", "#3"])
      expect(c.batches).toEqual([["a1"], ["b1"], ["a2", "a3"], ["b2"]])
    })))

  it("each caller gets its own item's answer, a failure included", () =>
    run(Effect.gen(function*() {
      const c = recording({ slots: 1, max: 10 }, (i) => (i === 3 ? Exit.fail("three refused") : Exit.succeed(`#${i}`)))
      const fibers = []
      for (const i of [1, 2, 3, 4]) fibers.push(yield* Effect.forkChild(Effect.exit(c.submit("a", i))))
      while (c.batches.length < 2) {
        yield* c.release()
        yield* settle
      }
      yield* c.release()
      expect(c.batches).toEqual([["a1"], ["a2", "a3", "a4"]])
      expect(yield* Fiber.joinAll(fibers)).toEqual([Exit.succeed("#1"), Exit.succeed("#2"), Exit.fail("three refused"), Exit.succeed("#4")])
    })))

  it("a defect of a batch reaches every caller in it, and the next batch still goes", () =>
    run(Effect.gen(function*() {
      let calls = 0
      const submit = coalescing({ slots: 1, max: 10 }, (_key: string, items: ReadonlyArray<number>) =>
        Effect.suspend(() => (++calls === 1 ? Effect.die(new Error("database gone")) : Effect.succeed(items.map((i) => Exit.succeed(i * 10))))))
      const first = yield* Effect.exit(submit("a", 1))
      expect(Exit.isFailure(first) && Exit.hasDies(first)).toBe(true)
      expect(yield* submit("a", 2)).toBe(20)
    })))

  it("a waiting caller that is interrupted leaves its batch", () =>
    run(Effect.gen(function*() {
      const c = recording({ slots: 1, max: 10 })
      const first = yield* Effect.forkChild(c.submit("a", 1))
      yield* settle
      const dropped = yield* Effect.forkChild(c.submit("a", 2))
      const kept = yield* Effect.forkChild(c.submit("a", 3))
      yield* settle
      yield* Fiber.interrupt(dropped)
      while (c.batches.length < 2) {
        yield* c.release()
        yield* settle
      }
      yield* c.release()
      expect(yield* Fiber.join(first)).toBe("#1")
      expect(yield* Fiber.join(kept)).toBe("#3")
      expect(c.batches).toEqual([["a1"], ["a3"]])
    })))

  it("with no slots every item goes alone, at once", () =>
    run(Effect.gen(function*() {
      const c = recording({ slots: 0, max: 10 })
      const fibers = []
      for (const i of [1, 2, 3]) fibers.push(yield* Effect.forkChild(c.submit("a", i)))
      yield* settle
      expect(c.batches).toEqual([["a1"], ["a2"], ["a3"]])
      yield* c.release()
      expect(yield* Fiber.joinAll(fibers)).toEqual(["#1", "#2", "#3"])
    })))
})
