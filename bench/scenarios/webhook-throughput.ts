// webhook-throughput: a burst of --webhook-events job.created events goes straight into the outbox (SQL) while the
// dispatcher is stopped; then it starts, and deliveries/s = all deliveries ÷ (last arrival − start).
import { waitIdle, webhookCount, webhookEvents } from "../lib/options.ts"
import { createJob, runId, smallJob } from "../lib/seed.ts"
import { log, roundTo, settle } from "../lib/util.ts"
import type { WebhookScenarioRun } from "./webhooks.ts"

export interface ThroughputResult {
  events: number
  expected: number
  /** expected ÷ (last arrival − dispatcher start) */
  deliveriesPerSec: number
  /** expected ÷ (last delivery recorded succeeded − dispatcher start), from webhook_deliveries.updated_at */
  recordedPerSec: number
  /** between the 10th and the 90th percentile of arrivals (no start-up, no tail) */
  steadyPerSec: number
  firstArrivalMs: number
  lastArrivalMs: number
  lastRecordedMs: number
  outboxInsertMs: number
  /** arrivals in each 500 ms after the dispatcher started */
  arrivalsPer500Ms: Array<number>
}

export const throughput: WebhookScenarioRun = async ({ round, db, srv, rcv }) => {
  // a real job.created payload to copy, then the burst straight into the outbox while the dispatcher is stopped
  await createJob(srv, smallJob(`WH-TEMPLATE-${runId}`))
  const burst = await srv.command(`outbox ${webhookEvents}`)
  const events = Number(burst.job_created_undispatched)
  const expected = events * webhookCount
  await srv.command("analyze")
  const analyzed = performance.now()
  const busyBefore = await settle(waitIdle, "measuring")
  log(`${db}/webhook-throughput round ${round}: ${events} events × ${webhookCount} webhooks = ${expected} deliveries, starting the dispatcher`)
  const started = await srv.command("dispatcher start")
  const startedAt = Number(started.started_at_ms)
  return {
    expected,
    analyzed,
    busyBefore,
    started,
    arriveMs: 180_000,
    drainMs: 60_000,
    finish: (st) => {
      const arrivals = rcv.deliveries.map((d) => d.arrivalMs).sort((a, b) => a - b)
      const last = arrivals[arrivals.length - 1] ?? NaN
      const a10 = arrivals[Math.floor(arrivals.length * 0.1)] ?? NaN
      const a90 = arrivals[Math.floor(arrivals.length * 0.9)] ?? NaN
      const perSec = (n: number, ms: number) => roundTo(n / (ms / 1000))
      return {
        throughput: {
          events,
          expected,
          deliveriesPerSec: perSec(rcv.deliveries.length, last - startedAt),
          recordedPerSec: perSec(Number(st.succeeded), Number(st.last_succeeded_ms) - startedAt),
          steadyPerSec: perSec(Math.floor(arrivals.length * 0.9) - Math.floor(arrivals.length * 0.1), a90 - a10),
          firstArrivalMs: (arrivals[0] ?? NaN) - startedAt,
          lastArrivalMs: last - startedAt,
          lastRecordedMs: Math.round(Number(st.last_succeeded_ms) - startedAt),
          outboxInsertMs: Number(burst.ms),
          arrivalsPer500Ms: arrivals.reduce((acc: Array<number>, a) => {
            const i = Math.max(0, Math.floor((a - startedAt) / 500))
            while (acc.length <= i) acc.push(0)
            acc[i]!++
            return acc
          }, [])
        }
      }
    },
    logLine: ({ throughput: tp }) =>
      `${tp!.deliveriesPerSec} deliveries/s (received), ${tp!.recordedPerSec}/s (recorded), steady ${tp!.steadyPerSec}/s,` +
      ` first after ${tp!.firstArrivalMs} ms, signatures ok ${rcv.signaturesOk}/${rcv.deliveries.length}`
  }
}
