// `mes serve` sets V8's heap growing factor at run time (DECISIONS: "A list page's bytes"): MES_HEAP_GROWING_PERCENT,
// default 100, 0 for V8's own factor.
import { ConfigProvider, Effect } from "effect"
import { describe, expect, it } from "vitest"
import { HeapGrowingPercent, heapGrowingFlag } from "../src/serve-live.ts"

const read = (env: Record<string, string>) =>
  Effect.runSync(Effect.provide(Effect.gen(function*() { return yield* HeapGrowingPercent }), ConfigProvider.layer(ConfigProvider.fromEnv({ env }))))

describe("MES_HEAP_GROWING_PERCENT", () => {
  it("defaults to 100 and reads the variable", () => {
    expect(read({})).toBe(100)
    expect(read({ MES_HEAP_GROWING_PERCENT: "50" })).toBe(50)
  })

  it("maps to V8's flag, none for 0 or less, at most 1000", () => {
    expect(heapGrowingFlag(100)).toBe("--heap-growing-percent=100")
    expect(heapGrowingFlag(0)).toBeUndefined()
    expect(heapGrowingFlag(-1)).toBeUndefined()
    expect(heapGrowingFlag(5000)).toBe("--heap-growing-percent=1000")
  })
})
