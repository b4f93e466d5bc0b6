import { afterEach, describe, expect, it, vi } from "vitest"
import { newId } from "../src/index.ts"

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("newId (record ids: UUID version 7)", () => {
  afterEach(() => {
    vi.restoreAllMocks()
  })

  it("makes version-7 UUIDs whose first 48 bits are the Unix milliseconds", () => {
    vi.spyOn(Date, "now").mockReturnValue(0x0123_4567_89ab)
    const id = newId()
    expect(id).toMatch(UUID_V7)
    expect(id.slice(0, 13)).toBe("01234567-89ab")
    expect(id).toHaveLength(36)
  })

  it("never repeats, across more ids than one draw of random bytes serves", () => {
    const ids = Array.from({ length: 5000 }, () => newId())
    for (const id of ids) expect(id).toMatch(UUID_V7)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("sorts ids of later milliseconds after earlier ones, as text and as PostgreSQL's uuid order", () => {
    const at = (ms: number) => {
      vi.spyOn(Date, "now").mockReturnValue(ms)
      return newId()
    }
    const ids = [at(1_700_000_000_000), at(1_700_000_000_001), at(1_700_000_000_255), at(1_700_000_000_256), at(1_800_000_000_000)]
    expect([...ids].sort()).toEqual(ids)
  })

  it("returns a string of its own each time (the previous id is not overwritten)", () => {
    const first = newId()
    const copy = `${first}`
    newId()
    expect(first).toBe(copy)
  })
})
