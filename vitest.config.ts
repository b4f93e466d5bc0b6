import { defineConfig } from "vitest/config"

// Node 20 lacks Map.groupBy, which vitest 5's reporter uses to print failures.
if (typeof (Map as any).groupBy !== "function") {
  ;(Map as any).groupBy = <K, V>(items: Iterable<V>, key: (v: V, i: number) => K) => {
    const out = new Map<K, Array<V>>()
    let i = 0
    for (const v of items) {
      const k = key(v, i++)
      const list = out.get(k)
      if (list) list.push(v)
      else out.set(k, [v])
    }
    return out
  }
}

export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*/vitest.config.ts"]
  }
})
