// Durations in configuration (MES_* variables): `0`, `500ms`, `5s`, `5m`, `2h`, `1d`, or an effect
// Duration string such as `5 seconds`. One parser for every setting, so they all read alike.
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** The duration `text` names, or undefined when it names none (negative and infinite ones included). */
export const parseDuration = (text: string): Duration.Duration | undefined => {
  const item = text.trim()
  const short = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(item)
  if (short !== null && (short[2] !== undefined || Number(short[1]) === 0)) {
    return Duration.millis(Number(short[1]) * UNIT_MS[short[2] ?? "ms"]!)
  }
  const parsed = Duration.fromInput(item as Duration.Input)
  return Option.isSome(parsed) && Duration.isFinite(parsed.value) && Duration.toMillis(parsed.value) >= 0 ? parsed.value : undefined
}

/**
 * A duration setting (`name`, e.g. MES_AUTH_CACHE_TTL) with its default when unset or empty; a value nobody
 * can read stops the start-up instead of silently running with the default.
 */
export const durationConfig = (name: string, fallback: Duration.Duration) =>
  Config.String(name).pipe(
    Config.option,
    Config.map((text) => {
      if (Option.isNone(text) || text.value.trim() === "") return fallback
      const parsed = parseDuration(text.value)
      if (parsed === undefined) throw new Error(`${name}: '${text.value}' is not a duration (use e.g. 500ms, 30s, 5m, 0)`)
      return parsed
    })
  )
