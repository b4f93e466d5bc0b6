// The webhook dispatcher (spec 6, issue: webhooks): a background fiber that fans outbox events out
// into deliveries and sends them, with retries, signatures and attempt logs. It runs inside
// `mes serve` and is a plain layer for embedders (`WebhookDispatcher.layer(options)`, or
// `WebhookDispatcher.layerConfig` for the MES_WEBHOOK_* environment).
//
// How it works, each tick (every `pollInterval`, at once while there is more work, and after a committed
// write of a tenant with an active webhook when the API shares a CommitSignal):
//   1. fan-out: up to `batchSize` outbox rows (oldest first) become one pending delivery per
//      subscribed active webhook of the event's tenant and leave the outbox (DeliveryStore.fanOut, one statement);
//   2. claim: due pending deliveries are leased (`lease`) into a local queue that `concurrency`
//      workers take from, each sending one attempt at a time, so one slow receiver never delays the
//      others. The claim shares the workers between tenants: each place goes to the tenant holding
//      the fewest, oldest delivery first within a tenant, and a tenant not known to answer in time (its
//      first attempts, or receivers that answer late or never) holds at most `tenantConcurrency` (half the
//      workers by default), and such tenants together leave an eighth of the workers (at least one) to
//      another tenant's first attempt, so one tenant's backlog or unanswering receivers never hold up another's.
//      The loop claims again when the queue is half empty, so a worker that finishes starts
//      its next attempt without waiting for a round trip (up to `concurrency` claimed deliveries
//      wait, none when the lease is too short to let them);
//   3. record: the attempt's outcome, next attempt time and log row; the attempts that finish
//      while a record statement runs are written together by the next one (one round trip for
//      many deliveries under load). Workers hand the outcome over and go on.
// Claims skip rows other dispatchers hold (FOR UPDATE SKIP LOCKED and leases), so several
// processes on one PostgreSQL share the work and each attempt is made once. API requests only
// write the outbox row: they never wait for a delivery.
//
// Shutdown (the layer's scope closes): stop claiming, give in-flight attempts `shutdownGrace` to
// finish and be recorded, interrupt the rest and release their leases so another dispatcher (or the
// next start) retries them at once.
import { CommitSignal, type CommittedWrite } from "./commit-signal.ts"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Config from "effect/Config"
import * as Cause from "effect/Cause"
import * as Queue from "effect/Queue"
import { type AttemptRecord, type ClaimedDelivery, type DeliveryShare, DeliveryStore, DURATION_WANTED, integerConfig, networkFailure, parsedConfig, MAX_SETTING_DURATION_DAYS, MAX_SETTING_DURATION_MS, parseDuration as parseDurationText, parsePositiveDuration, UrlGuard } from "@mes/domain"
import { databaseUnavailable } from "../unavailable.ts"
import { boundedMemo } from "./bounded-memo.ts"
import { deliveryHeaders } from "./sign.ts"
import { guardedLookup } from "./url-guard.ts"
import * as http from "node:http"
import * as https from "node:https"

/**
 * Delay before each attempt, the first counted from fan-out: 8 attempts, then failed. The first retry's 4.5 s leaves
 * room for the poll (250 ms), the claim and the send, so it reaches the receiver within 5 s of the failed attempt
 * (spec DECISIONS); a 5 s delay plus the poll made it 5.1 s.
 */
export const DEFAULT_RETRY_SCHEDULE: ReadonlyArray<Duration.Input> = [
  "0 millis",
  "4500 millis",
  "5 minutes",
  "30 minutes",
  "2 hours",
  "5 hours",
  "10 hours",
  "10 hours"
]

export interface DispatcherOptions {
  /** Delay before each attempt (its length is the number of attempts). Default DEFAULT_RETRY_SCHEDULE. */
  readonly schedule?: ReadonlyArray<Duration.Input>
  /** How often the outbox and due deliveries are polled when idle. Default 250 ms. */
  readonly pollInterval?: Duration.Input
  /** Limit of one attempt (connect, headers and up to 64 KiB of response body). Default 10 s. */
  readonly timeout?: Duration.Input
  /** Attempts in flight at once in this dispatcher. Default 32. */
  readonly concurrency?: number
  /**
   * Attempts of one tenant claimed or sent at once in this dispatcher unless it is known to answer in time (an
   * attempt of it ended within 1 s, or half the timeout, in the last 30 s, and none ran longer), so that a
   * tenant's first attempts, or receivers that answer late or never, leave workers to the other tenants.
   * Default half of `concurrency`, at least 1. Such tenants together also leave an eighth of `concurrency` (at
   * least one) free for other tenants' first attempts.
   */
  readonly tenantConcurrency?: number
  /** Outbox events fanned out per statement. Default 100. */
  readonly batchSize?: number
  /** How long a claim holds a delivery; must exceed `timeout`. Default timeout + 50 s. */
  readonly lease?: Duration.Input
  /** How long shutdown waits for in-flight attempts before releasing them. Default 5 s. */
  readonly shutdownGrace?: Duration.Input
}

interface Resolved {
  readonly scheduleMs: ReadonlyArray<number>
  readonly pollMs: number
  readonly timeoutMs: number
  readonly concurrency: number
  readonly tenantConcurrency: number
  readonly batchSize: number
  readonly leaseMs: number
  readonly graceMs: number
}

export class WebhookConfigError extends Data.TaggedError("WebhookConfigError")<{ readonly message: string }> {}

/** The most workers a dispatcher runs (MES_WEBHOOK_CONCURRENCY, default 32). */
export const MAX_WEBHOOK_CONCURRENCY = 1_000

const ms = (input: Duration.Input) => Duration.toMillis(Duration.fromInputUnsafe(input))

const resolve = (o: DispatcherOptions): Resolved => {
  const scheduleMs = (o.schedule ?? DEFAULT_RETRY_SCHEDULE).map(ms)
  // beyond the longest a setting takes, a lease or a next attempt overflowed PostgreSQL's timestamps
  if (scheduleMs.length === 0 || scheduleMs.some((d) => !(d >= 0 && d <= MAX_SETTING_DURATION_MS))) {
    throw new WebhookConfigError({ message: `the webhook retry schedule needs at least one delay, each from 0 to ${MAX_SETTING_DURATION_DAYS}d` })
  }
  const timeoutMs = ms(o.timeout ?? "10 seconds")
  const pollMs = ms(o.pollInterval ?? "250 millis")
  // at 0 every attempt would time out at once, or an idle dispatcher would ask the database without a pause
  for (const [what, value] of [["timeout", timeoutMs], ["poll interval", pollMs]] as const) {
    if (!(value > 0 && value <= MAX_SETTING_DURATION_MS)) {
      throw new WebhookConfigError({ message: `the webhook ${what} must be a duration of more than 0 and at most ${MAX_SETTING_DURATION_DAYS}d` })
    }
  }
  // each worker is a fiber started at once: 100,000,000 of them never let the server start
  for (const [what, n] of [["concurrency", o.concurrency], ["concurrency of a tenant", o.tenantConcurrency]] as const) {
    if (n !== undefined && !(Number.isInteger(n) && n >= 1 && n <= MAX_WEBHOOK_CONCURRENCY)) {
      throw new WebhookConfigError({ message: `the webhook ${what} must be a whole number from 1 to ${MAX_WEBHOOK_CONCURRENCY}` })
    }
  }
  const positive = (n: number | undefined, fallback: number) => (n !== undefined && Number.isInteger(n) && n > 0 ? n : fallback)
  const concurrency = positive(o.concurrency, 32)
  return {
    scheduleMs,
    pollMs,
    timeoutMs,
    concurrency,
    tenantConcurrency: Math.min(concurrency, positive(o.tenantConcurrency, Math.ceil(concurrency / 2))),
    batchSize: positive(o.batchSize, 100),
    leaseMs: Math.max(ms(o.lease ?? timeoutMs + 50_000), timeoutMs + 1_000),
    graceMs: ms(o.shutdownGrace ?? "5 seconds")
  }
}

/**
 * A warning about a dispatcher step that failed. While the database cannot serve (unreachable, read-only, out of
 * resources: the REST server's 503 rules), the reason in a few words, not the cause with its trace: the step is
 * retried every 250 ms to 1 s for as long as that lasts. Any other failure is logged with its cause.
 */
const warnFailed = (what: string, then: string, cause: Cause.Cause<unknown>) => {
  const why = databaseUnavailable(cause)
  return why !== undefined ? Effect.logWarning(`${what} (${why.log}); ${then}`) : Effect.logWarning(`${what}; ${then}`, cause)
}

/** What MES_WEBHOOK_RETRY_SCHEDULE takes, for the message that refuses another value. */
const RETRY_SCHEDULE_WANTED = `comma-separated delays like 0,5s,5m,2h, each a duration of at most ${MAX_SETTING_DURATION_DAYS}d`

/**
 * A retry schedule such as `0,5s,5m,30m,2h,5h,10h,10h`: comma-separated delays, each a number with a unit (ms, s,
 * m, h, d) or an effect Duration string (`5 seconds`); a bare `0` is allowed. One delay per attempt. Undefined
 * when `text` is not one.
 */
const retryScheduleOf = (text: string): ReadonlyArray<Duration.Duration> | undefined => {
  const delays = text.split(",").map((item) => (item.trim() === "" ? undefined : parseDurationText(item)))
  return delays.every((d) => d !== undefined) ? delays as ReadonlyArray<Duration.Duration> : undefined
}

/** `retryScheduleOf`, throwing WebhookConfigError with what it takes when `text` is not a schedule. */
export const parseRetrySchedule = (text: string): ReadonlyArray<Duration.Duration> => {
  const schedule = retryScheduleOf(text)
  if (schedule === undefined) throw new WebhookConfigError({ message: `'${text}' is not ${RETRY_SCHEDULE_WANTED}` })
  return schedule
}

export class WebhookDispatcher extends Context.Service<WebhookDispatcher, {
  /** Polls now instead of at the next interval (e.g. after a test event or a redelivery). */
  readonly wake: Effect.Effect<void>
  /** Attempts currently in flight in this dispatcher. */
  readonly inFlight: Effect.Effect<number>
}>()("mes/adapters-http/WebhookDispatcher") {
  /** Runs the dispatcher for the layer's lifetime (needs DeliveryStore and UrlGuard). */
  static readonly layer = (options: DispatcherOptions = {}): Layer.Layer<WebhookDispatcher, never, DeliveryStore | UrlGuard> =>
    Layer.effect(WebhookDispatcher, make(options))

  /** A service that does nothing (MES_WEBHOOK_DISPATCHER=off). */
  static readonly disabled: Layer.Layer<WebhookDispatcher> = Layer.succeed(
    WebhookDispatcher,
    WebhookDispatcher.of({ wake: Effect.void, inFlight: Effect.succeed(0) })
  )

  /**
   * The dispatcher configured from the environment:
   * MES_WEBHOOK_DISPATCHER (`on` | `off`, default on: `off` for API-only processes),
   * MES_WEBHOOK_RETRY_SCHEDULE (default `0,4.5s,5m,30m,2h,5h,10h,10h`),
   * MES_WEBHOOK_POLL_INTERVAL (default 250ms), MES_WEBHOOK_TIMEOUT (default 10s),
   * MES_WEBHOOK_CONCURRENCY (default 32).
   */
  static readonly layerConfig: Layer.Layer<WebhookDispatcher, WebhookConfigError | Config.ConfigError, DeliveryStore | UrlGuard> =
    Layer.unwrap(Effect.gen(function*() {
      const env = yield* Config.all({
        enabled: Config.Literals(["on", "off"], "MES_WEBHOOK_DISPATCHER").pipe(Config.withDefault("on" as const)),
        // undefined (or 0): unset, the dispatcher's own default; a value that is not one stops the start naming it
        schedule: parsedConfig<ReadonlyArray<Duration.Duration> | undefined>("MES_WEBHOOK_RETRY_SCHEDULE", undefined, retryScheduleOf, RETRY_SCHEDULE_WANTED),
        poll: parsedConfig<Duration.Duration | undefined>("MES_WEBHOOK_POLL_INTERVAL", undefined, parsePositiveDuration, DURATION_WANTED.positive),
        timeout: parsedConfig<Duration.Duration | undefined>("MES_WEBHOOK_TIMEOUT", undefined, parsePositiveDuration, DURATION_WANTED.positive),
        concurrency: integerConfig("MES_WEBHOOK_CONCURRENCY", 0, { min: 1, max: MAX_WEBHOOK_CONCURRENCY })
      })
      if (env.enabled === "off") return WebhookDispatcher.disabled
      const options: DispatcherOptions = {
        ...(env.schedule !== undefined ? { schedule: env.schedule } : {}),
        ...(env.poll !== undefined ? { pollInterval: env.poll } : {}),
        ...(env.timeout !== undefined ? { timeout: env.timeout } : {}),
        ...(env.concurrency > 0 ? { concurrency: env.concurrency } : {})
      }
      yield* Effect.try({ try: () => resolve(options), catch: (e) => e as WebhookConfigError })
      return WebhookDispatcher.layer(options)
    }))
}

/** What one HTTP attempt produced. */
type SendResult =
  | { readonly _tag: "Response"; readonly status: number; readonly snippet: string }
  | { readonly _tag: "NetworkError"; readonly message: string }
  | { readonly _tag: "Timeout" }

const MAX_BODY_READ = 64 * 1024

/** How long the dispatcher trusts what it learned about a tenant's webhooks (whether it has an active one). */
const SUBSCRIPTIONS_TTL_MS = 5_000
/** An attempt that runs this long (or half the timeout, when that is shorter) is slow: its tenant is limited... */
const SLOW_ATTEMPT_MS = 1_000
/** ...for this long after it, and one that ends sooner frees its tenant of the limit for as long (unless slow). */
const REMEMBERED_MS = 30_000

/** Tenants remembered at most; all are forgotten when full (a miss only asks again). */
const SUBSCRIPTIONS_CAPACITY = 10_000

// node:http with keep-alive agents rather than fetch: on Node 20 a fetch costs ≈ 3× the CPU of an
// http.request (web streams, abort signals, undici's request objects), and the dispatcher's process
// spends most of a delivery on it (bench: webhook-throughput). Free sockets are closed after 4 s,
// before the 5 s keep-alive timeout of most servers, so a reused socket is rarely one the receiver is closing.
// One pair per dispatcher: with a guard that judges addresses, its sockets connect through the guarded lookup
// (and a socket another dispatcher connected is never reused).
const agentsOf = (checkAddress: ((address: string) => string | undefined) | undefined): Agents => {
  const lookup = checkAddress === undefined ? {} : { lookup: guardedLookup(checkAddress) }
  return {
    "http:": new http.Agent({ keepAlive: true, timeout: 4_000, ...lookup }),
    "https:": new https.Agent({ keepAlive: true, timeout: 4_000, ...lookup })
  }
}
type Agents = { readonly "http:": http.Agent; readonly "https:": https.Agent }

const networkMessage = (e: unknown): string => `network error: ${networkFailure(e)}`.slice(0, 500)

/** Where an attempt goes, parsed once per webhook URL (URLs rarely change). */
const targetOf = boundedMemo((url): http.RequestOptions => {
  const u = new URL(url)
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`unsupported protocol ${u.protocol}`)
  return {
    protocol: u.protocol,
    hostname: u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname,
    port: u.port === "" ? undefined : Number(u.port),
    path: `${u.pathname}${u.search}`,
    ...(u.username !== "" || u.password !== "" ? { auth: `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` } : {}),
    method: "POST"
  }
})

/**
 * POSTs the body and calls `done` once with what came of it; reads at most 64 KiB of the answer (kept short for
 * last_error) and drops the rest. A network error or the timeout is a result too. Returns a function that abandons
 * the attempt (no `done` then).
 */
const post = (agents: Agents, url: string, body: string, headers: Record<string, string>, timeoutMs: number, done: (result: SendResult) => void) => {
  let settled = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let req: http.ClientRequest | undefined
  const finish = (result: SendResult) => {
    if (settled) return
    settled = true
    if (timer !== undefined) clearTimeout(timer)
    done(result)
  }
  try {
    const target = targetOf(url)
    // Redirects are not followed (node:http never does): a 3xx is a failed attempt (following one could
    // reach an address the SSRF guard refused, and the signature is bound to the registered URL).
    req = (target.protocol === "https:" ? https.request : http.request)({
      ...target,
      agent: agents[target.protocol as keyof Agents],
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) }
    }, (res) => {
      let text = ""
      let read = 0
      const answer = () => finish({ _tag: "Response", status: res.statusCode ?? 0, snippet: text.slice(0, 200) })
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        read += chunk.length
        if (text.length < 512) text += chunk
        if (read > MAX_BODY_READ) {
          answer()
          res.destroy()
        }
      })
      res.on("end", answer)
      res.on("error", (e) => finish({ _tag: "NetworkError", message: networkMessage(e) }))
    })
    timer = setTimeout(() => {
      finish({ _tag: "Timeout" })
      req?.destroy()
    }, timeoutMs)
    req.on("error", (e) => finish({ _tag: "NetworkError", message: networkMessage(e) }))
    req.end(body)
  } catch (e) {
    finish({ _tag: "NetworkError", message: networkMessage(e) })
  }
  return () => {
    settled = true
    if (timer !== undefined) clearTimeout(timer)
    req?.destroy()
  }
}

const make = (options: DispatcherOptions) =>
  Effect.gen(function*() {
    const config = resolve(options)
    const store = yield* DeliveryStore
    const guard = yield* UrlGuard
    const agents = agentsOf(guard.checkAddress)

    // Leased and not yet recorded, by id (claimed and waiting for a worker, being sent, or being
    // recorded): what shutdown releases.
    const inFlight = new Map<string, ClaimedDelivery>()
    // Sharing the workers between tenants. `held`: claimed and not yet answered (waiting for a worker or
    // being sent), by tenant: each claim gives its places to the tenants holding fewest. A tenant is limited
    // to `tenantConcurrency` held, and a worker sends no more than that many of its attempts at once (one
    // claimed before the tenant was limited goes back to the database), unless it is known to answer in time:
    // one of its attempts ended within `slowMs` in the last REMEMBERED_MS, and none ran `slowMs` (a receiver
    // that answers late or never). So a tenant's first attempts, or those to receivers that hang, leave the other
    // workers free for the other tenants, and a tenant whose receivers answer in time has every worker.
    const held = new Map<string, number>()
    const sendingOf = new Map<string, number>()
    // the attempts being sent, by delivery id: when each started (its size is how many are being sent)
    const started = new Map<string, { readonly tenantId: string; readonly at: number }>()
    const slowUntil = new Map<string, number>()
    const fastUntil = new Map<string, number>()
    const slowMs = Math.min(SLOW_ATTEMPT_MS, config.timeoutMs / 2)
    // Workers that the limited tenants leave free, all of them together, for another tenant's first attempt: a
    // limited tenant that sends one already takes no worker from the last `reserve` free. Without it two or more
    // such tenants held every worker, and another tenant waited for one of their attempts to end (the timeout).
    const reserve = Math.max(1, Math.floor(config.concurrency / 8))
    const count = (m: Map<string, number>, tenantId: string, by: number) => {
      const n = (m.get(tenantId) ?? 0) + by
      if (n <= 0) m.delete(tenantId)
      else m.set(tenantId, n)
    }
    const within = (m: Map<string, number>, tenantId: string) => {
      const until = m.get(tenantId)
      if (until === undefined) return false
      if (until > Date.now()) return true
      m.delete(tenantId)
      return false
    }
    const isLimited = (tenantId: string) => within(slowUntil, tenantId) || !within(fastUntil, tenantId)
    const attempted = (tenantId: string, ms: number) =>
      (ms >= slowMs ? slowUntil : fastUntil).set(tenantId, Date.now() + REMEMBERED_MS)
    /** Whether a worker may send an attempt of a limited tenant now (the claim's `mayTake`, by what is sent). */
    const maySend = (tenantId: string) => {
      const sending = sendingOf.get(tenantId) ?? 0
      return sending < config.tenantConcurrency && (sending === 0 || config.concurrency - started.size > reserve)
    }
    /**
     * How the next claim shares its places: every tenant known to answer in time is named, without a limit; a
     * limited tenant gets what its share and the reserve leave (one claimed beyond that goes back, by `maySend`).
     */
    const share = (): DeliveryShare => {
      const now = Date.now()
      for (const s of started.values()) if (now - s.at >= slowMs) attempted(s.tenantId, now - s.at)
      let total = 0
      for (const n of held.values()) total += n
      const spare = config.concurrency - reserve - total
      const mayTake = (holds: number) => Math.max(0, Math.min(config.tenantConcurrency - holds, holds === 0 ? Math.max(spare, 1) : spare))
      const room = new Map<string, number | null>()
      for (const tenantId of new Set([...held.keys(), ...slowUntil.keys(), ...fastUntil.keys()])) {
        room.set(tenantId, isLimited(tenantId) ? mayTake(held.get(tenantId) ?? 0) : null)
      }
      return { held, room, otherRoom: mayTake(0) }
    }
    // Claimed deliveries wait here for one of `concurrency` workers, so a worker that finishes
    // starts the next attempt at once instead of waiting for a claim round trip. The loop claims
    // again when the queue runs low; a waiting delivery whose lease could run out before its
    // attempt ends is released instead of sent.
    const ready = yield* Queue.unbounded<{ readonly delivery: ClaimedDelivery; readonly sendBy: number }>()
    // claimed deliveries a worker gave back, still leased (in `inFlight`, which shutdown releases) until the next tick
    const givenBack: Array<string> = []
    // how many claimed deliveries may wait: none when the lease leaves no room for waiting
    const sendSlackMs = Math.max(0, config.leaseMs - config.timeoutMs - 1_000)
    const depth = sendSlackMs >= 5_000 ? config.concurrency : 0
    const wakeUp = yield* Latch.make(false)
    // in the API's process, a committed write wakes the loop (no wait for the next poll)
    const signal = yield* Effect.serviceOption(CommitSignal)
    // the outbox is read when a write may have added events (a commit here, or the poll interval
    // passed: writes of other processes), not each time a finished attempt frees a slot
    let outboxDue = true
    let lastFanOut = 0
    const wake = Effect.sync(() => (outboxDue = true)).pipe(Effect.andThen(wakeUp.open), Effect.asVoid)
    // A write queues events only for a tenant with an active webhook (eventWrites), so a commit of a tenant
    // known to have none wakes nothing: without this, every write ran a fan-out and a claim (two statements)
    // even where nobody subscribes: under the create load 0.27 transactions per request, 0.15 without them.
    // What a tenant has is asked once per SUBSCRIPTIONS_TTL_MS, and again after a write to its webhooks;
    // a webhook registered through another process is seen within that time, and its events are found by
    // the poll meanwhile.
    const subscriptions = new Map<string, { readonly subscribed: boolean; readonly until: number }>()
    const unknown = new Set<string>()
    const committed = (write: CommittedWrite) =>
      Effect.suspend(() => {
        if (write.tenantId === "") return wake
        if (write.webhooksChanged) subscriptions.delete(write.tenantId)
        const known = subscriptions.get(write.tenantId)
        if (known === undefined || known.until <= Date.now()) {
          unknown.add(write.tenantId)
          return wakeUp.open
        }
        return known.subscribed ? wake : Effect.void
      }).pipe(Effect.asVoid)
    /** Learns whether the tenants of the writes seen since the last tick have webhooks; true when one has. */
    const learnSubscriptions = Effect.gen(function*() {
      if (unknown.size === 0) return false
      const asked = [...unknown]
      const subscribed = new Set(yield* store.subscribedTenants(asked))
      if (subscriptions.size + asked.length > SUBSCRIPTIONS_CAPACITY) subscriptions.clear()
      const until = Date.now() + SUBSCRIPTIONS_TTL_MS
      for (const tenantId of asked) {
        unknown.delete(tenantId)
        subscriptions.set(tenantId, { subscribed: subscribed.has(tenantId), until })
      }
      return subscribed.size > 0
    })
    if (Option.isSome(signal)) yield* signal.value.subscribe(committed)

    const send = (d: ClaimedDelivery): Effect.Effect<SendResult> => {
      const headers = deliveryHeaders({
        secret: d.secret,
        deliveryId: d.id,
        eventType: d.eventType,
        body: d.body,
        timestamp: Math.floor(Date.now() / 1000)
      })
      return Effect.callback<SendResult>((resume) => {
        const abandon = post(agents, d.url, d.body, headers, config.timeoutMs, (result) => resume(Effect.succeed(result)))
        return Effect.sync(abandon)
      })
    }

    /** The outcome of a failed attempt: retry per the schedule, or failed when it is used up. */
    const failed = (d: ClaimedDelivery, fields: { statusCode?: number; error: string; durationMs: number }): AttemptRecord => {
      const next = d.attempts + 1
      return next < config.scheduleMs.length
        ? { delivery: d, outcome: "retrying", retryInMs: config.scheduleMs[next]!, ...fields }
        : { delivery: d, outcome: "failed", ...fields }
    }

    const attempt = (d: ClaimedDelivery): Effect.Effect<AttemptRecord> =>
      Effect.gen(function*() {
        if (!d.active) return { delivery: d, outcome: "failed", error: "webhook is inactive", durationMs: 0 }
        const started = performance.now()
        const refused = yield* guard.check(d.url)
        if (refused !== undefined) {
          return failed(d, { error: `url refused: ${refused}`, durationMs: performance.now() - started })
        }
        const result = yield* send(d)
        const durationMs = performance.now() - started
        switch (result._tag) {
          case "Timeout":
            return failed(d, { error: `timeout after ${config.timeoutMs} ms`, durationMs })
          case "NetworkError":
            return failed(d, { error: result.message, durationMs })
          case "Response": {
            if (result.status >= 200 && result.status < 300) {
              return { delivery: d, outcome: "succeeded", statusCode: result.status, durationMs }
            }
            const snippet = result.snippet.trim() === "" ? "" : `: ${result.snippet.trim()}`
            if (result.status === 410) {
              return {
                delivery: d,
                outcome: "failed",
                statusCode: 410,
                error: `HTTP 410 Gone: webhook deactivated${snippet}`,
                durationMs,
                deactivateWebhook: true
              }
            }
            return failed(d, { statusCode: result.status, error: `HTTP ${result.status}${snippet}`, durationMs })
          }
        }
      })

    const logOutcome = (r: AttemptRecord) =>
      r.outcome === "failed"
        ? Effect.logWarning(
          `webhook delivery ${r.delivery.id} (${r.delivery.eventType}) to webhook ${r.delivery.webhookId} failed after ${r.delivery.attempts + 1} attempt(s): ${r.error ?? ""}`
        )
        : Effect.void

    // Answered attempts waiting to be written; one recorder writes whatever has gathered, in one
    // statement. A worker does not wait for it: it hands the outcome over and starts its next attempt.
    const toRecord = yield* Queue.unbounded<AttemptRecord>()
    let recording = 0
    // An answered attempt that is not recorded is sent again once its lease expires: while the
    // database is unreachable the batch is retried (every 250 ms) as long as the lease lasts.
    const recordWindowMs = Math.max(0, config.leaseMs - config.timeoutMs - 1_000)
    const recordPersistently = (records: ReadonlyArray<AttemptRecord>) =>
      Effect.gen(function*() {
        const giveUpAt = Date.now() + recordWindowMs
        for (;;) {
          const exit = yield* Effect.exit(store.record(records))
          if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) || Date.now() >= giveUpAt) return yield* exit
          yield* warnFailed("webhook dispatcher: could not record attempts", "retrying", exit.cause)
          yield* Effect.sleep(250)
        }
      })
    const recorder = Effect.gen(function*() {
      for (;;) {
        const batch = yield* Queue.takeAll(toRecord)
        recording = batch.length
        const exit = yield* Effect.exit(recordPersistently(batch))
        recording = 0
        if (Exit.isFailure(exit)) {
          if (Cause.hasInterruptsOnly(exit.cause)) return yield* exit
          yield* warnFailed(`webhook dispatcher: could not record ${batch.length} attempt(s)`, "their leases will expire", exit.cause)
        } else {
          for (const r of batch) yield* logOutcome(r)
        }
        // recorded (or given up: the lease expires and the attempt is made again)
        for (const r of batch) inFlight.delete(r.delivery.id)
        wakeUp.openUnsafe()
      }
    })

    const worker = Effect.gen(function*() {
      for (;;) {
        const { delivery, sendBy } = yield* Queue.take(ready)
        const tenantId = delivery.tenantId
        if (Queue.sizeUnsafe(ready) <= depth / 2) wakeUp.openUnsafe()
        if (Date.now() > sendBy || (isLimited(tenantId) && !maySend(tenantId))) {
          // waited too long for a worker, or its tenant is limited and sends its share already (or would take the
          // reserve): back to the database, for another dispatcher or a later claim; the next tick releases all
          // that were given back meanwhile in one statement
          count(held, tenantId, -1)
          givenBack.push(delivery.id)
          wakeUp.openUnsafe()
          continue
        }
        count(sendingOf, tenantId, 1)
        const at = Date.now()
        started.set(delivery.id, { tenantId, at })
        // interruptible until the receiver answered; from then on the outcome is handed to the
        // recorder even if shutdown interrupts now
        yield* Effect.uninterruptibleMask((restore) =>
          restore(attempt(delivery)).pipe(
            Effect.onExit(() =>
              Effect.sync(() => {
                count(sendingOf, tenantId, -1)
                count(held, tenantId, -1)
                started.delete(delivery.id)
                attempted(tenantId, Date.now() - at)
              })
            ),
            Effect.flatMap((outcome) => Queue.offer(toRecord, outcome))
          )
        )
      }
    })

    /** One fan-out and claim; true when there may be more work right away. */
    const tick = Effect.gen(function*() {
      yield* wakeUp.close
      if (givenBack.length > 0) {
        const ids = givenBack.splice(0)
        yield* store.release(ids).pipe(Effect.catchCause(() => Effect.void))
        for (const id of ids) inFlight.delete(id)
      }
      let more = false
      if (yield* learnSubscriptions) outboxDue = true
      if (outboxDue || Date.now() - lastFanOut >= config.pollMs) {
        outboxDue = false
        lastFanOut = Date.now()
        const fanned = yield* store.fanOut(config.batchSize)
        if (fanned >= config.batchSize) more = outboxDue = true
      }
      // keep up to `depth` claimed deliveries waiting beside the attempts being sent, and at most
      // 4 × `concurrency` leased in all (the recorder may lag behind the workers)
      const waiting = Queue.sizeUnsafe(ready)
      const want = Math.min(
        config.batchSize,
        config.concurrency + depth - waiting - started.size,
        4 * config.concurrency - inFlight.size
      )
      if (waiting <= depth / 2 && want > 0) {
        const claimed = yield* store.claimDue(want, config.leaseMs, share())
        const sendBy = Date.now() + sendSlackMs
        for (const d of claimed) {
          inFlight.set(d.id, d)
          count(held, d.tenantId, 1)
          yield* Queue.offer(ready, { delivery: d, sendBy })
        }
        if (claimed.length >= want) more = true
      }
      return more && Queue.sizeUnsafe(ready) <= depth / 2
    }).pipe(
      // a claim is registered before shutdown can interrupt: no lease is left untracked
      Effect.uninterruptible,
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          // e.g. the database is unreachable: say so, and try again a little later
          : warnFailed("webhook dispatcher: polling failed", "retrying", cause).pipe(
            Effect.andThen(Effect.sleep(Math.max(config.pollMs, 1_000))),
            Effect.as(false)
          )
      )
    )

    const loop = Effect.gen(function*() {
      for (;;) {
        const more = yield* tick
        if (more) yield* Effect.yieldNow
        else yield* Effect.timeoutOption(wakeUp.await, config.pollMs)
      }
    })

    const loopFiber = yield* Effect.forkDetach(loop)
    const workers = yield* Effect.forEach(Array.from({ length: config.concurrency }), () => Effect.forkDetach(worker))
    const recorderFiber = yield* Effect.forkDetach(recorder)

    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        yield* Fiber.interrupt(loopFiber)
        // deliveries no worker has started stay leased by nobody: released below
        yield* Queue.clear(ready)
        // attempts being sent get the grace period to finish and be recorded
        const graceEnds = Date.now() + config.graceMs
        while ((started.size > 0 || recording > 0 || Queue.sizeUnsafe(toRecord) > 0) && Date.now() < graceEnds) {
          yield* Effect.sleep(5)
        }
        yield* Fiber.interruptAll(workers)
        yield* Fiber.interrupt(recorderFiber)
        const pending = [...inFlight.keys()]
        inFlight.clear()
        if (pending.length > 0) {
          yield* store.release(pending).pipe(
            Effect.catchCause((cause) => warnFailed("webhook dispatcher: could not release leases", "they expire", cause))
          )
        }
        // the kept-alive sockets to receivers
        agents["http:"].destroy()
        agents["https:"].destroy()
      })
    )

    return WebhookDispatcher.of({
      wake,
      inFlight: Effect.sync(() => started.size)
    })
  })
