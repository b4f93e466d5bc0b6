// The embedded database's settings, read before PGlite starts: a value it cannot start with is named up front, where
// PGlite says only "PGlite failed to initialize properly".
import { Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { Db } from "../src/index.ts"

describe("MES_PGLITE_SHARED_BUFFERS (sharedBuffersOf)", () => {
  it("reads sizes as PostgreSQL writes them, as whole kB: units, decimals, a bare number of 8 kB pages", () => {
    expect(Db.sharedBuffersOf("8MB")).toBe("8192kB")
    expect(Db.sharedBuffersOf(" 8 MB ")).toBe("8192kB")
    expect(Db.sharedBuffersOf("0.5MB")).toBe("512kB")
    expect(Db.sharedBuffersOf("128kB")).toBe("128kB")
    expect(Db.sharedBuffersOf("16")).toBe("128kB")
    expect(Db.sharedBuffersOf("1GB")).toBe("1048576kB")
    expect(Db.sharedBuffersOf("131072B")).toBe("128kB")
  })

  it("refuses what is no size, below PostgreSQL's least (128kB) or beyond what PGlite starts with (1GB)", () => {
    for (const text of ["lots", "", "8mb", "8 M", "-8MB", "1e3MB", "1", "15", "100kB", "1025MB", "2GB", "1TB"]) {
      expect(Db.sharedBuffersOf(text), text).toBeUndefined()
    }
  })

  it("an embedding service's refused size fails the layer with it, before PGlite is loaded", async () => {
    const exit = await Effect.runPromiseExit(Layer.build(Db.pglite(undefined, { sharedBuffers: "2GB" })).pipe(Effect.scoped))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("sharedBuffers: '2GB' is not a size from 128kB to 1GB")
  })
})
