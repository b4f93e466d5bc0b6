// webhook-lag: POST /api-jobs (1 × 1 × 1) at each --webhook-rates events/s, open loop, for --duration s after
// --warmup s, with the dispatcher running; lag = arrival at the receiver − the event's `timestamp`.
import { duration, waitIdle, warmup, webhookCount } from "../lib/options.ts"
import { createJob, runId, smallJob } from "../lib/seed.ts"
import { http, type Server } from "../lib/server-process.ts"
import { log, percentile, roundTo, settle, sleep, type Stats, stats } from "../lib/util.ts"
import type { WebhookScenarioRun } from "./webhooks.ts"

export interface LagResult {
  rate: number
  /** creates sent in the measured phase, and how many answered 201 */
  sent: number
  created: number
  achievedPerSec: number
  /** sends that left more than 5 ms after their slot (the API or the event loop fell behind) */
  late: number
  expected: number
  /** arrival − event timestamp, ms, over the measured deliveries */
  lagMs: Stats
  /** the same, only the first delivery (of the webhooks) of each event */
  firstLagMs: Stats
  apiMs: Stats
  apiNon201: number
  apiSamples: Array<string>
  check: { lagMs: Array<number> }
  warmup: { sent: number; created: number }
  /** from the start of the measured phase, per second: deliveries of measured events that arrived, and their p50 lag */
  perSecond: Array<{ arrived: number; lagP50Ms: number | null }>
}

/** What the creates of one phase did. */
interface Sent {
  api: Array<number>
  non201: number
  samples: Array<string>
  late: number
  created: number
}
const sent = (): Sent => ({ api: [], non201: 0, samples: [], late: 0, created: 0 })

/**
 * Sends `n` small nested creates at `rate` per second, open loop: create i leaves at t0 + i/rate whether or
 * not earlier ones have answered (at most 256 in flight; past that it waits, and the send counts as late).
 */
const produce = async (srv: Server, rate: number, n: number, prefix: string, out: Sent) => {
  const inFlight = new Set<Promise<void>>()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const due = t0 + i * 1000 / rate
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    while (inFlight.size >= 256) await Promise.race(inFlight)
    if (performance.now() - due > 5) out.late++
    const started = performance.now()
    const p = http(srv, "POST", "/api-jobs", smallJob(`${prefix}-${runId}-${String(i).padStart(6, "0")}`)).then(
      (r) => {
        out.api.push(performance.now() - started)
        if (r.status === 201) out.created++
        else {
          out.non201++
          if (out.samples.length < 3) out.samples.push(`${r.status}: ${r.text.slice(0, 300)}`)
        }
      },
      (e) => {
        out.non201++
        if (out.samples.length < 3) out.samples.push(`error: ${String(e)}`)
      }
    ).finally(() => inFlight.delete(p))
    inFlight.add(p)
  }
  await Promise.all(inFlight)
  return (performance.now() - t0) / 1000
}

/** The dispatcher runs from the start; events come from POST /api-jobs at `rate` per second. */
export const lag = (rate: number): WebhookScenarioRun => async ({ round, db, poll, srv, rcv }) => {
  await srv.command("analyze")
  const analyzed = performance.now()
  const started = await srv.command("dispatcher start")
  // one event by hand, end to end: all webhooks get it, well-formed
  await createJob(srv, smallJob(`LC-${runId}-${round}`))
  if (!(await rcv.waitFor(webhookCount, 10_000))) throw new Error(`the check event reached ${rcv.deliveries.length} of ${webhookCount} webhooks within 10 s`)
  if (rcv.problems > 0) throw new Error(`the check event's deliveries are malformed: ${rcv.problemSamples.join(" | ")}`)
  const checkLag = rcv.deliveries.map((d) => d.arrivalMs - d.eventMs)
  const busyBefore = await settle(waitIdle, "warm-up")
  const warm = sent()
  const meas = sent()
  const warmN = Math.round(warmup * rate)
  const measN = Math.round(duration * rate)
  if (warmN > 0) await produce(srv, rate, warmN, "LW", warm)
  log(`${db}/webhook-lag round ${round}: ${rate} events/s for ${duration}s, ${webhookCount} webhooks, poll ${poll}`)
  const measureStart = Date.now()
  const seconds = await produce(srv, rate, measN, "LM", meas)
  return {
    expected: (1 + warm.created + meas.created) * webhookCount,
    analyzed,
    busyBefore,
    started,
    arriveMs: 60_000,
    drainMs: 30_000,
    finish: (_, problems) => {
      if (warm.non201 + meas.non201 > 0) problems.push(`${warm.non201 + meas.non201} creates not answered 201: ${[...warm.samples, ...meas.samples].join(" | ")}`)
      const measured = rcv.deliveries.filter((d) => d.jobNumber.startsWith(`LM-${runId}-`))
      const first = new Map<string, number>()
      for (const d of measured) first.set(d.jobNumber, Math.min(first.get(d.jobNumber) ?? Infinity, d.arrivalMs - d.eventMs))
      const lagMs = stats(measured.map((d) => d.arrivalMs - d.eventMs))
      if (lagMs.min !== null && lagMs.min < 0) problems.push(`negative lag ${lagMs.min} ms (clock?)`)
      if (measured.length !== meas.created * webhookCount) problems.push(`${measured.length} measured deliveries, expected ${meas.created * webhookCount}`)
      const buckets: Array<Array<number>> = []
      for (const d of measured) {
        const i = Math.max(0, Math.floor((d.arrivalMs - measureStart) / 1000))
        while (buckets.length <= i) buckets.push([])
        buckets[i]!.push(d.arrivalMs - d.eventMs)
      }
      return {
        lag: {
          rate,
          sent: measN,
          created: meas.created,
          achievedPerSec: roundTo(measN / seconds),
          late: meas.late,
          expected: meas.created * webhookCount,
          lagMs,
          firstLagMs: stats([...first.values()]),
          apiMs: stats(meas.api),
          apiNon201: meas.non201,
          apiSamples: meas.samples,
          check: { lagMs: checkLag },
          warmup: { sent: warmN, created: warm.created },
          perSecond: buckets.map((b) => ({ arrived: b.length, lagP50Ms: percentile([...b].sort((x, y) => x - y), 50) }))
        }
      }
    },
    logLine: ({ lag: l }) =>
      `${rate}/s (achieved ${l!.achievedPerSec}/s, late ${l!.late}), lag p50 ${l!.lagMs.p50} ms, p99 ${l!.lagMs.p99} ms,` +
      ` max ${l!.lagMs.max} ms (p50 in the 1st / last second ${l!.perSecond[0]?.lagP50Ms} / ${l!.perSecond[Math.min(duration, l!.perSecond.length) - 1]?.lagP50Ms} ms);` +
      ` API p50 ${l!.apiMs.p50} ms; signatures ok ${rcv.signaturesOk}/${rcv.deliveries.length}`
  }
}
