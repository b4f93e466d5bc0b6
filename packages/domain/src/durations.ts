// Durations in configuration (MES_* variables): `0`, `500ms`, `5s`, `5m`, `2h`, `1d`, or an effect
// Duration string such as `5 seconds`. One parser for every setting, so they all read alike; and whole-number
// settings (sizes, counts) with their bounds, read the same way.
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Option from "effect/Option"

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/**
 * The longest duration a setting takes. Longer ones overflowed PostgreSQL's timestamps where a setting is added to
 * the time (an Idempotency-Key's expiry: every such request 500; a webhook attempt's lease: no delivery ever
 * claimed), and mean nothing for the others.
 */
export const MAX_SETTING_DURATION_DAYS = 365
/** MAX_SETTING_DURATION_DAYS in milliseconds, for options given as durations rather than read from settings. */
export const MAX_SETTING_DURATION_MS = MAX_SETTING_DURATION_DAYS * UNIT_MS.d!

/** What a duration setting takes, for the message that refuses another value. */
export const DURATION_WANTED = {
  any: `a duration of at most ${MAX_SETTING_DURATION_DAYS}d (use e.g. 500ms, 30s, 5m, 0)`,
  positive: `a duration of more than 0 and at most ${MAX_SETTING_DURATION_DAYS}d (use e.g. 500ms, 30s, 5m)`
} as const

/**
 * The duration `text` names, or undefined when it names none (negative and infinite ones included) or one longer
 * than MAX_SETTING_DURATION_DAYS.
 */
export const parseDuration = (text: string): Duration.Duration | undefined => {
  const item = text.trim()
  const short = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/.exec(item)
  const parsed = short !== null && (short[2] !== undefined || Number(short[1]) === 0)
    ? Option.some(Duration.millis(Number(short[1]) * UNIT_MS[short[2] ?? "ms"]!))
    : Duration.fromInput(item as Duration.Input)
  if (Option.isNone(parsed) || !Duration.isFinite(parsed.value)) return undefined
  const ms = Duration.toMillis(parsed.value)
  return ms >= 0 && ms <= MAX_SETTING_DURATION_MS ? parsed.value : undefined
}

/**
 * A setting (`name`) read as `parse` reads it, with its default when unset or empty. A value `parse` refuses stops
 * the start-up with the setting's name and what is `wanted`, instead of silently running with the default (or with
 * a value that refuses every request, hangs them, or never connects).
 */
export const parsedConfig = <A>(name: string, fallback: A, parse: (text: string) => A | undefined, wanted: string) =>
  Config.String(name).pipe(
    Config.option,
    Config.map((text) => {
      if (Option.isNone(text) || text.value.trim() === "") return fallback
      const parsed = parse(text.value.trim())
      if (parsed === undefined) throw new Error(`${name}: '${text.value}' is not ${wanted}`)
      return parsed
    })
  )

/** RFC 7518 3.2 (and RFC 2104): an HMAC-SHA256 key must have at least the hash's 32 bytes. */
export const HMAC_KEY_MIN_BYTES = 32

/** Why `secret` cannot be the HMAC-SHA256 key `name` (its length, never the secret), or undefined when it can. */
export const shortHmacKey = (name: string, secret: string): string | undefined => {
  const bytes = new TextEncoder().encode(secret).length
  return bytes >= HMAC_KEY_MIN_BYTES
    ? undefined
    : `${name} is ${bytes} bytes long: an HMAC-SHA256 key must be at least ${HMAC_KEY_MIN_BYTES} bytes (RFC 7518 3.2; make one with openssl rand -hex 32)`
}

/**
 * A secret setting (`name`), as given (not trimmed); unset or empty is none. `hmacKey`: one shorter than
 * HMAC_KEY_MIN_BYTES stops the start-up naming the setting and the length, where it used to sign and verify.
 */
export const secretConfig = (name: string, o: { readonly hmacKey?: boolean } = {}) =>
  Config.String(name).pipe(
    Config.option,
    Config.map((given) => {
      if (Option.isNone(given) || given.value === "") return undefined
      const short = o.hmacKey === true ? shortHmacKey(name, given.value) : undefined
      if (short !== undefined) throw new Error(short)
      return given.value
    })
  )

/**
 * A duration setting (`name`, e.g. MES_AUTH_CACHE_TTL) with its default when unset or empty. `positive`: 0 is
 * refused too, for a timeout or lifetime that at 0 would fail every request, probe or URL (or keep nothing).
 */
export const durationConfig = (name: string, fallback: Duration.Duration, o: { readonly positive?: boolean } = {}) =>
  o.positive === true
    ? parsedConfig(name, fallback, parsePositiveDuration, DURATION_WANTED.positive)
    : parsedConfig(name, fallback, parseDuration, DURATION_WANTED.any)

/** The duration `text` names when it is more than 0, else undefined. */
export const parsePositiveDuration = (text: string): Duration.Duration | undefined => {
  const d = parseDuration(text)
  return d !== undefined && Duration.toMillis(d) > 0 ? d : undefined
}

/**
 * A whole-number setting (`name`, e.g. MES_DB_POOL_SIZE) with its default when unset or empty; a value that is not a
 * whole number within `bounds` stops the start-up with what is wanted, where it would have refused every request
 * (a body limit below 1), hung them (a batch of at most 0), or never connected (a pool of 0).
 */
export const integerConfig = (name: string, fallback: number, bounds: { readonly min: number; readonly max?: number }) =>
  parsedConfig(
    name,
    fallback,
    (given) => {
      const n = Number(given)
      return /^[-+]?\d+$/.test(given) && Number.isSafeInteger(n) && n >= bounds.min && (bounds.max === undefined || n <= bounds.max)
        ? n
        : undefined
    },
    `a whole number ${bounds.max === undefined ? `of at least ${bounds.min}` : `from ${bounds.min} to ${bounds.max}`}`
  )
