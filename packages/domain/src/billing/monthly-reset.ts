// The monthly reset (spec 4.13, 2.9; DECISIONS: current_month_parts): every active tenant's count of
// parts created since its last reset goes back to 0, with one log record per tenant. Run by the HTTP
// task, `mes monthly-reset`, and the in-process schedule of `mes serve` (once per period however
// many processes share the database, catching up on start).
import * as Clock from "effect/Clock"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { newId } from "../ports.ts"

/** spec 4.13: 00:00 UTC on day 1 of each month: for a cron running `mes monthly-reset` (`mes serve` counts UTC months). */
export const MONTHLY_RESET_CRON = "0 0 1 * *"

/** Who ran a reset; kept in each log record's metadata. */
export type ResetTrigger = "http" | "cli" | "schedule"

export interface ResetDetail {
  readonly tenant_id: string
  readonly previous_count: number
  readonly reset_successful: boolean
}

/** The answer of spec 4.13 (`data`). */
export interface ResetReport {
  readonly summary: {
    readonly total_tenants_reset: number
    readonly total_parts_reset: number
    readonly successful_resets: number
    readonly failed_resets: number
    readonly duration_ms: number
    readonly reset_timestamp: string
  }
  readonly reset_details: ReadonlyArray<ResetDetail>
  readonly message: string
}

/** One reset, planned: the instant, and the log record id of each tenant. */
export interface ResetPlan {
  readonly at: Date
  readonly metadata: Readonly<Record<string, unknown>>
  readonly entries: ReadonlyArray<{ readonly tenant_id: string; readonly log_id: string }>
}

export class MonthlyResetStore extends Context.Service<MonthlyResetStore, {
  readonly activeTenants: () => Effect.Effect<ReadonlyArray<string>>
  /** Folds each tenant's usage ledger into its log record, in one statement; each tenant's previous count. */
  readonly reset: (plan: ResetPlan) => Effect.Effect<ReadonlyArray<{ readonly tenant_id: string; readonly previous: number }>>
  /** True when this caller now holds the period (nobody finished it, and nobody holds a fresh claim). */
  readonly claimPeriod: (periodStart: Date) => Effect.Effect<boolean>
  readonly finishPeriod: (periodStart: Date) => Effect.Effect<void>
}>()("mes/domain/MonthlyResetStore") {}

/** The first instant of the UTC month `at` lies in. */
export const periodStartOf = (at: Date): Date => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1))

/**
 * The next reset strictly after `now` (the first instant of the next UTC month), whatever the host's time zone: the
 * same UTC calendar arithmetic as the period's start, with no cron parsed and no time zone (a named zone builds an
 * Intl.DateTimeFormat, whose first one loads ICU's time-zone data).
 */
export const nextMonthlyReset = (now: Date): Date => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))

/** How often a sleeping schedule wakes to look at the clock again (timers cannot sleep a whole month). */
const WAKE_EVERY = Duration.hours(1)
/** After a failed scheduled run, the next attempt. */
const RETRY_AFTER = Duration.minutes(1)

export class MonthlyReset extends Context.Service<MonthlyReset, {
  /** Resets every active tenant now; one tenant's failure does not stop the others. */
  readonly run: (trigger: ResetTrigger) => Effect.Effect<ResetReport>
  /**
   * The scheduled reset of the period `now` lies in, unless it was done (or is being done) already,
   * by this process or another: the report when this call ran it, else undefined.
   */
  readonly runScheduled: (now: Date) => Effect.Effect<ResetReport | undefined>
  /** Runs `runScheduled` at start (catch-up) and at every `0 0 1 * *` UTC; never returns. */
  readonly schedule: Effect.Effect<never>
}>()("mes/domain/MonthlyReset") {
  static readonly layer = Layer.effect(MonthlyReset, Effect.gen(function*() {
    const store = yield* MonthlyResetStore

    const resetAll = (tenants: ReadonlyArray<string>, at: Date, metadata: Record<string, unknown>) =>
      Effect.gen(function*() {
        const entries = tenants.map((tenant_id) => ({ tenant_id, log_id: newId() }))
        const all = yield* Effect.exit(store.reset({ at, metadata, entries }))
        if (Exit.isSuccess(all)) return new Map(all.value.map((r) => [r.tenant_id, r.previous]))
        // the one statement failed: each tenant on its own, so one tenant's failure leaves the others reset
        const one = yield* Effect.forEach(entries, (entry) => Effect.exit(store.reset({ at, metadata, entries: [entry] })))
        const done = new Map<string, number>()
        for (const exit of one) if (Exit.isSuccess(exit)) for (const r of exit.value) done.set(r.tenant_id, r.previous)
        return done
      })

    const run = (trigger: ResetTrigger, extra: Record<string, unknown> = {}) =>
      Effect.gen(function*() {
        const started = yield* Clock.currentTimeMillis
        const at = new Date(started)
        const tenants = yield* store.activeTenants()
        const done = yield* resetAll(tenants, at, { trigger, ...extra })
        const reset_details = tenants.map((tenant_id): ResetDetail => ({
          tenant_id,
          previous_count: done.get(tenant_id) ?? 0,
          reset_successful: done.has(tenant_id)
        }))
        const successful = reset_details.filter((d) => d.reset_successful)
        const failed = reset_details.length - successful.length
        const parts = successful.reduce((n, d) => n + d.previous_count, 0)
        const report: ResetReport = {
          summary: {
            total_tenants_reset: successful.length,
            total_parts_reset: parts,
            successful_resets: successful.length,
            failed_resets: failed,
            duration_ms: (yield* Clock.currentTimeMillis) - started,
            reset_timestamp: at.toISOString()
          },
          reset_details,
          message: failed === 0
            ? `Monthly reset completed: ${successful.length} tenant(s) reset, ${parts} part(s) cleared`
            : `Monthly reset completed with errors: ${successful.length} tenant(s) reset, ${failed} failed`
        }
        if (failed > 0) yield* Effect.logError("monthly reset: some tenants failed", reset_details.filter((d) => !d.reset_successful))
        return report
      })

    const runScheduled = (now: Date) =>
      Effect.gen(function*() {
        const period = periodStartOf(now)
        if (!(yield* store.claimPeriod(period))) return undefined
        const report = yield* run("schedule", { period_start: period.toISOString() })
        yield* store.finishPeriod(period)
        yield* Effect.logInfo(report.message)
        return report
      })

    const schedule = Effect.gen(function*() {
      // the latest period known done: nothing to ask the database until the clock passes the next one
      let doneThrough = -Infinity
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const period = periodStartOf(new Date(now)).getTime()
        if (period > doneThrough) {
          const exit = yield* Effect.exit(runScheduled(new Date(now)))
          if (Exit.isSuccess(exit)) doneThrough = period
          else {
            yield* Effect.logError("monthly reset: scheduled run failed; retrying", exit.cause)
            yield* Effect.sleep(RETRY_AFTER)
            continue
          }
        }
        const next = nextMonthlyReset(new Date(now)).getTime()
        yield* Effect.sleep(Duration.min(Duration.millis(Math.max(next - now, 0) + 1), WAKE_EVERY))
      }
    })

    return MonthlyReset.of({ run: (trigger) => run(trigger), runScheduled, schedule })
  }))
}

/** MES_MONTHLY_RESET: `on` (default) runs the schedule in `mes serve`; `off` leaves the reset to cron. */
export const MonthlyResetSetting = Config.Literals(["on", "off"], "MES_MONTHLY_RESET").pipe(Config.withDefault("on" as const))

/** The in-process schedule, running while the layer lives (unless MES_MONTHLY_RESET=off). */
export const MonthlyResetSchedule = Layer.effectDiscard(Effect.gen(function*() {
  if ((yield* MonthlyResetSetting) === "off") return
  yield* Effect.forkScoped((yield* MonthlyReset).schedule)
}))
