import * as Duration from "effect/Duration"
import { describe, expect, it } from "vitest"
import { parseDuration } from "../src/index.ts"

const ms = (text: string) => {
  const d = parseDuration(text)
  return d === undefined ? undefined : Duration.toMillis(d)
}

describe("parseDuration (MES_* duration settings)", () => {
  it("reads a bare 0, numbers with a unit and effect Duration strings", () => {
    expect([ms("0"), ms("500ms"), ms("30s"), ms("5m"), ms("2h"), ms("1d"), ms(" 1.5s "), ms("5 seconds"), ms("0 millis")])
      .toEqual([0, 500, 30_000, 300_000, 7_200_000, 86_400_000, 1_500, 5_000, 0])
  })

  it("reads nothing from a bare non-zero number, a negative, an unknown unit, infinity or words", () => {
    expect([ms("30"), ms("-1s"), ms("5y"), ms("Infinity"), ms("soon"), ms("")]).toEqual([undefined, undefined, undefined, undefined, undefined, undefined])
  })
})
