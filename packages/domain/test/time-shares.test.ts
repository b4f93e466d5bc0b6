// distributeBatchTime (spec 3.3): invariants as test names.
import { describe, expect, it } from "vitest"
import { distributeBatchTime } from "../src/index.ts"

const ops = (...estimates: Array<number | null>) => estimates.map((e, i) => ({ operation_id: `op${i}`, estimated_time_minutes: e }))
const sum = (xs: ReadonlyArray<{ share_seconds: number }>) => xs.reduce((s, x) => s + x.share_seconds, 0)

describe("distributeBatchTime", () => {
  it("shares sum to the batch's tracked seconds exactly, for many sizes and weights", () => {
    for (let n = 1; n <= 9; n++) {
      for (const tracked of [0, 1, 7, 59, 60, 3599, 3601, 86_399]) {
        const weighted = distributeBatchTime(tracked, ops(...Array.from({ length: n }, (_, i) => (i * 7 + 3) % 11)))
        const equal = distributeBatchTime(tracked, ops(...Array.from({ length: n }, () => null)))
        expect(sum(weighted)).toBe(tracked)
        expect(sum(equal)).toBe(tracked)
      }
    }
  })

  it("weights by estimated_time_minutes when every operation has one", () => {
    const shares = distributeBatchTime(3600, ops(10, 20, 30))
    expect(shares.map((s) => s.share_seconds)).toEqual([600, 1200, 1800])
    expect(shares.every((s) => s.basis === "estimated_time")).toBe(true)
    expect(shares.map((s) => s.weight)).toEqual([10, 20, 30])
  })

  it("shares equally when any operation lacks an estimate", () => {
    const shares = distributeBatchTime(3600, ops(10, null, 30))
    expect(shares.map((s) => s.share_seconds)).toEqual([1200, 1200, 1200])
    expect(shares.every((s) => s.basis === "equal")).toBe(true)
  })

  it("shares equally when all estimates are zero", () => {
    expect(distributeBatchTime(90, ops(0, 0, 0)).map((s) => s.share_seconds)).toEqual([30, 30, 30])
  })

  it("gives leftover seconds to the largest remainders, earlier operations first on ties", () => {
    expect(distributeBatchTime(10, ops(null, null, null)).map((s) => s.share_seconds)).toEqual([4, 3, 3])
    expect(distributeBatchTime(10, ops(1, 2)).map((s) => s.share_seconds)).toEqual([3, 7])
  })

  it("never gives a negative share and reports minutes as seconds / 60", () => {
    const shares = distributeBatchTime(125, ops(1, 1000))
    expect(shares.every((s) => s.share_seconds >= 0)).toBe(true)
    for (const s of shares) expect(s.share_minutes).toBeCloseTo(s.share_seconds / 60, 10)
    expect(shares.every((s) => s.tracked_seconds === 125)).toBe(true)
  })

  it("estimates near the largest double share as their ratios say, with the weights as given", () => {
    expect(distributeBatchTime(3601, ops(1e308, 1e308)).map((s) => [s.share_seconds, s.weight])).toEqual([[1801, 1e308], [1800, 1e308]])
    expect(distributeBatchTime(3600, ops(Number.MAX_VALUE)).map((s) => s.share_seconds)).toEqual([3600])
    expect(distributeBatchTime(4000, ops(1.5e308, 0.5e308, 0)).map((s) => s.share_seconds)).toEqual([3000, 1000, 0])
    // a weight tiny beside the largest counts as 0: its share is far below a second
    expect(distributeBatchTime(3600, ops(1e308, 5e-324, 1e308)).map((s) => [s.share_seconds, s.weight])).toEqual([[1800, 1e308], [0, 5e-324], [1800, 1e308]])
    expect(distributeBatchTime(3600, ops(1e-250, 1e100)).map((s) => s.share_seconds)).toEqual([0, 3600])
    // a tracked time past int4 (an entry started decades ago)
    expect(sum(distributeBatchTime(3_000_000_000, ops(1, 2, 1e308)))).toBe(3_000_000_000)
  })

  it("no operations, no shares", () => {
    expect(distributeBatchTime(100, [])).toEqual([])
  })
})
