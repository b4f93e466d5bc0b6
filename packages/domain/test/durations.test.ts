import * as Cause from "effect/Cause"
import type * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import { durationConfig, integerConfig, parseDuration, secretConfig } from "../src/index.ts"

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

/** `config` read with `name` set to `value` (unset when undefined): what it reads, or the message that stops the start. */
const readSetting = <A>(config: Config.Config<A>, name: string, value: string | undefined): A | string => {
  const exit = Effect.runSyncExit(Effect.gen(function*() {
    return yield* config
  }).pipe(Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: value === undefined ? {} : { [name]: value } })))))
  return Exit.isSuccess(exit) ? exit.value : String(Cause.squash(exit.cause))
}

describe("integerConfig (MES_* whole-number settings)", () => {
  const read = (value: string | undefined, bounds: { min: number; max?: number } = { min: 1 }) =>
    readSetting(integerConfig("MES_X", 7, bounds), "MES_X", value)

  it("reads whole numbers within its bounds, and the default when unset or empty", () => {
    expect([read(undefined), read(""), read("  "), read("12"), read(" 3 "), read("+4"), read("0", { min: 0 }), read("10", { min: 0, max: 10 })])
      .toEqual([7, 7, 7, 12, 3, 4, 0, 10])
  })

  it("refuses anything else, saying what it wants, where the start-up stops", () => {
    for (const bad of ["0", "-3", "1.5", "1e3", "abc", "99999999999999999999"]) {
      expect(read(bad), bad).toContain(`MES_X: '${bad}' is not a whole number of at least 1`)
    }
    expect(read("11", { min: 0, max: 10 })).toContain("MES_X: '11' is not a whole number from 0 to 10")
  })
})

describe("secretConfig (secrets; HMAC keys at least 32 bytes, RFC 7518 3.2)", () => {
  const read = (value: string | undefined, hmacKey: boolean) => readSetting(secretConfig("MES_S", { hmacKey }), "MES_S", value)

  it("reads a secret as given, none when unset or empty; an HMAC key of 32 bytes or more", () => {
    const key = "k".repeat(32)
    expect([read(undefined, true), read("", true), read(key, true), read(` ${key} `, true), read("short", false)])
      .toEqual([undefined, undefined, key, ` ${key} `, "short"])
    // 11 three-byte characters are 33 bytes
    expect(read("€".repeat(11), true)).toBe("€".repeat(11))
  })

  it("refuses a shorter HMAC key, naming the setting and the length but never the secret", () => {
    for (const [bad, bytes] of [["short-secret", 12], ["k".repeat(31), 31], ["€".repeat(10), 30]] as const) {
      const message = read(bad, true) as string
      expect(message, bad).toContain(`MES_S is ${bytes} bytes long: an HMAC-SHA256 key must be at least 32 bytes`)
      expect(message, bad).not.toContain(bad)
    }
  })
})

describe("durationConfig (MES_* duration settings)", () => {
  const read = (value: string | undefined, positive: boolean) => {
    const got = readSetting(durationConfig("MES_D", Duration.seconds(7), { positive }), "MES_D", value)
    return typeof got === "string" ? got : Duration.toMillis(got)
  }

  it("reads a duration, the default when unset or empty; 0 where 0 means something", () => {
    expect([read(undefined, true), read("", true), read("250ms", true), read("5 seconds", true), read("0", false)]).toEqual([7_000, 7_000, 250, 5_000, 0])
  })

  it("refuses 0 for a timeout or lifetime, saying what it wants", () => {
    for (const zero of ["0", "0ms", "0 millis", "0.0s"]) {
      expect(read(zero, true), zero).toContain(`MES_D: '${zero}' is not a duration of more than 0 and at most 365d (use e.g. 500ms, 30s, 5m)`)
    }
    expect(read("soon", false)).toContain("MES_D: 'soon' is not a duration of at most 365d (use e.g. 500ms, 30s, 5m, 0)")
  })

  it("refuses more than 365 days, which overflowed PostgreSQL's timestamps where a setting is added to the time", () => {
    expect([read("365d", true), read("8760h", false)]).toEqual([31_536_000_000, 31_536_000_000])
    for (const long of ["366d", "365.5d", "99999999d", "400 days", "1 week 360 days"]) {
      expect(read(long, true), long).toContain(`MES_D: '${long}' is not a duration of more than 0 and at most 365d`)
      expect(read(long, false), long).toContain(`MES_D: '${long}' is not a duration of at most 365d`)
    }
  })
})
