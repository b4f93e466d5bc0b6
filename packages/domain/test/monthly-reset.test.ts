import { afterEach, describe, expect, it } from "vitest"
import { nextMonthlyReset } from "../src/index.ts"

const next = (iso: string) => nextMonthlyReset(new Date(iso)).toISOString()
const hostZone = process.env.TZ

describe("nextMonthlyReset (spec 4.13: 00:00 UTC on day 1 of each month)", () => {
  afterEach(() => {
    if (hostZone === undefined) delete process.env.TZ
    else process.env.TZ = hostZone
  })

  it("is midnight UTC on the next first of a month, strictly after the instant given", () => {
    expect([
      next("2026-11-28T02:00:00.000Z"),
      next("2026-12-31T23:59:59.999Z"),
      next("2026-12-01T00:00:00.000Z"),
      next("2028-02-15T12:00:00.000Z")
    ]).toEqual(["2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z"])
  })

  it("does not follow the host's time zone or its daylight saving", () => {
    for (const zone of ["America/New_York", "Asia/Kolkata", "Pacific/Chatham"]) {
      process.env.TZ = zone
      expect([zone, next("2026-03-20T10:00:00.000Z"), next("2026-10-31T23:30:00.000Z")])
        .toEqual([zone, "2026-04-01T00:00:00.000Z", "2026-11-01T00:00:00.000Z"])
    }
  })
})
