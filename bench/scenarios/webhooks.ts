// The webhook scenarios: the dispatcher inside the server delivers to a receiver in this process (bench/receiver.ts).
// This is their common run: a fresh server with the poll interval of the case, the seed, the webhooks registered at
// the receiver, then the scenario (webhook-throughput.ts, webhook-lag.ts), then the wait for every delivery and the
// checks that each arrived once, well-formed, and was recorded `succeeded` after one attempt.
import { type Case, type DbKind, seedJobs, webhookCount, type WebhookScenario } from "../lib/options.ts"
import { http, type Server, withFreshServer } from "../lib/server-process.ts"
import { seed } from "../lib/seed.ts"
import { log, sleep, type Stats, stats } from "../lib/util.ts"
import { type Receiver, startReceiver } from "../receiver.ts"
import { lag, type LagResult } from "./webhook-lag.ts"
import { throughput, type ThroughputResult } from "./webhook-throughput.ts"

export interface WebhookRun {
  round: number
  db: DbKind
  scenario: WebhookScenario
  poll: string
  webhooks: number
  /** webhook-throughput */
  throughput?: ThroughputResult
  /** webhook-lag */
  lag?: LagResult
  receiver: {
    deliveries: number
    distinct: number
    duplicates: number
    signaturesOk: number
    problems: number
    problemSamples: Array<string>
    strays: number
    bodyBytes: Stats
  }
  server: Record<string, unknown>
  dispatcherEnv: Record<string, unknown>
  setupMs: { start: number; seed: number; analyze: number }
  cpuBusyBefore: number
  /** anything that makes the run invalid (the run then exits 1) */
  problems: Array<string>
}

/** A webhook scenario, from registered webhooks up to the last event it sends. */
export type WebhookScenarioRun = (ctx: { round: number; db: DbKind; poll: string; srv: Server; rcv: Receiver }) => Promise<WebhookMeasure>
export interface WebhookMeasure {
  /** deliveries to wait for */
  readonly expected: number
  /** performance.now() after ANALYZE: setupMs.analyze ends here */
  readonly analyzed: number
  readonly busyBefore: number
  /** the server's answer to `dispatcher start` */
  readonly started: Record<string, unknown>
  /** how long to wait for the deliveries to arrive, then for the server to have recorded them all */
  readonly arriveMs: number
  readonly drainMs: number
  /** the scenario's own part of the result, once every delivery is in; it may add problems */
  readonly finish: (st: Record<string, unknown>, problems: Array<string>) => { throughput: ThroughputResult } | { lag: LagResult }
  /** the log line of the finished run */
  readonly logLine: (run: WebhookRun) => string
}

const pollEnv = (poll: string | undefined): Record<string, string> =>
  poll === undefined || poll === "default" ? {} : { MES_WEBHOOK_POLL_INTERVAL: poll }

/** Registers `count` webhooks at the receiver (/hook/<i>), each subscribed to job.created, and keeps their secrets. */
const registerWebhooks = async (srv: Server, receiver: Receiver, count: number) => {
  const ids: Array<string> = []
  for (let i = 0; i < count; i++) {
    const r = await http(srv, "POST", "/api-webhooks", { url: `http://127.0.0.1:${receiver.port}/hook/${i}`, events: ["job.created"] })
    const d = r.status === 201 ? r.json().data : undefined
    if (typeof d?.webhook?.id !== "string" || typeof d?.secret !== "string" || d.secret === "") {
      throw new Error(`POST /api-webhooks answered ${r.status}: ${r.text.slice(0, 500)}`)
    }
    receiver.secrets[i] = d.secret
    ids.push(d.webhook.id)
  }
  return ids
}

/**
 * Waits until `expected` deliveries have arrived: at most `ms`, and only until nothing arrived for 2 s while the
 * server has nothing left to send (then some are missing). The server is asked only after such a pause, so
 * polling it does not compete with the dispatcher.
 */
const arrived = async (srv: Server, receiver: Receiver, expected: number, ms: number) => {
  const until = Date.now() + ms
  let seen = -1
  let quietSince = Date.now()
  while (Date.now() < until) {
    if (await receiver.waitFor(expected, 500)) return true
    if (receiver.deliveries.length !== seen) {
      seen = receiver.deliveries.length
      quietSince = Date.now()
    } else if (Date.now() - quietSince >= 2_000) {
      const st = await srv.command("webhooks")
      if (Number(st.pending) === 0 && Number(st.outbox_undispatched) === 0 && receiver.deliveries.length === seen) return false
      quietSince = Date.now()
    }
  }
  return receiver.deliveries.length >= expected
}

/** Polls the server until no delivery is pending (or `ms` passed); returns the last status. */
const drained = async (srv: Server, expected: number, ms: number): Promise<Record<string, unknown>> => {
  const until = Date.now() + ms
  for (;;) {
    const st = await srv.command("webhooks")
    const done = Number(st.pending) === 0 && Number(st.deliveries) >= expected && Number(st.outbox_undispatched) === 0
    if (done || Date.now() > until) return { ...st, drained: done }
    await sleep(200)
  }
}

/** The checks common to both webhook scenarios: every delivery arrived once, well-formed, and succeeded in SQL. */
const webhookProblems = (receiver: Receiver, st: Record<string, unknown>, expected: number) => {
  const problems: Array<string> = []
  const distinct = new Set(receiver.deliveries.map((d) => d.deliveryId)).size
  if (receiver.deliveries.length !== expected) problems.push(`received ${receiver.deliveries.length} deliveries, expected ${expected}`)
  if (distinct !== receiver.deliveries.length) problems.push(`${receiver.deliveries.length - distinct} duplicate deliveries`)
  if (receiver.problems > 0) problems.push(`${receiver.problems} malformed deliveries: ${receiver.problemSamples.join(" | ")}`)
  if (receiver.strays > 0) problems.push(`${receiver.strays} stray requests at the receiver`)
  if (st.drained !== true) problems.push(`not drained: ${Number(st.pending)} pending, ${Number(st.outbox_undispatched)} outbox rows undispatched`)
  if (Number(st.deliveries) !== expected || Number(st.succeeded) !== expected) {
    problems.push(`webhook_deliveries: ${Number(st.deliveries)} rows, ${Number(st.succeeded)} succeeded, expected ${expected}`)
  }
  if (Number(st.failed) > 0 || Number(st.logs_not_succeeded) > 0) {
    problems.push(`${Number(st.failed)} failed deliveries, ${Number(st.logs_not_succeeded)} unsuccessful attempts: ${JSON.stringify(st.error_samples)}`)
  }
  if (Number(st.not_one_attempt) > 0) problems.push(`${Number(st.not_one_attempt)} deliveries took more than one attempt`)
  return { problems, distinct }
}

const receiverSummary = (receiver: Receiver, distinct: number): WebhookRun["receiver"] => ({
  deliveries: receiver.deliveries.length,
  distinct,
  duplicates: receiver.deliveries.length - distinct,
  signaturesOk: receiver.signaturesOk,
  problems: receiver.problems,
  problemSamples: receiver.problemSamples,
  strays: receiver.strays,
  bodyBytes: stats(receiver.deliveries.map((d) => d.bytes))
})

export const runWebhooks = (round: number, db: DbKind, c: Case): Promise<WebhookRun> => {
  const scenario = c.scenario as WebhookScenario
  const poll = c.poll ?? "default"
  return withFreshServer(db, pollEnv(poll), async ({ server: srv, t0, afterStop }) => {
    const t1 = performance.now()
    // the same seed as the other scenarios, then ANALYZE (never on empty tables). No webhook exists yet, so the
    // seed's events are marked dispatched: a dispatcher would have fanned them out to nobody.
    await seed(srv, seedJobs)
    await srv.command("outbox done")
    const t2 = performance.now()
    const rcv = await startReceiver(srv.tenant)
    afterStop("receiver close", () => rcv.close())
    await registerWebhooks(srv, rcv, webhookCount)

    const run = scenario === "webhook-throughput" ? throughput : lag(c.rate!)
    const m = await run({ round, db, poll, srv, rcv })
    const all = await arrived(srv, rcv, m.expected, m.arriveMs)
    if (!all) log(`${db}/${scenario}: only ${rcv.deliveries.length} of ${m.expected} deliveries arrived`)
    const st = await drained(srv, m.expected, m.drainMs)
    await sleep(500) // anything still arriving (a duplicate) is counted
    await srv.command("dispatcher stop")
    const { problems, distinct } = webhookProblems(rcv, st, m.expected)
    const result: WebhookRun = {
      round,
      db,
      scenario,
      poll,
      webhooks: webhookCount,
      ...m.finish(st, problems),
      receiver: receiverSummary(rcv, distinct),
      server: Object.fromEntries(Object.entries(st).filter(([k]) => k !== "ok")),
      dispatcherEnv: m.started.env as Record<string, unknown>,
      setupMs: { start: Math.round(t1 - t0), seed: Math.round(t2 - t1), analyze: Math.round(m.analyzed - t2) },
      cpuBusyBefore: m.busyBefore,
      problems
    }
    log(`${db}/${scenario} round ${round}: ${m.logLine(result)}` + (problems.length > 0 ? `, PROBLEMS: ${problems.join("; ")}` : ""))
    return result
  })
}
