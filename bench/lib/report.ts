// The end of a recording: medians over the rounds, the tables on stdout, the results JSON, and exit code 1 when
// any run failed.
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { STEPS } from "../scenarios/lifecycle-ops.ts"
import { VERIFY_SAMPLE } from "../scenarios/lifecycle-verify.ts"
import { lifecycleJobs, OPERATORS } from "../scenarios/lifecycle.ts"
import { LIST_LIMIT } from "../scenarios/list.ts"
import type { RunResult } from "../scenarios/load.ts"
import type { WebhookRun } from "../scenarios/webhooks.ts"
import {
  cases, connections, dbs, duration, isWebhook, label, lifecycleRate, noWrite, out, pgliteDir, pgPool, rounds, scenarios, seedJobs,
  waitIdle, warmup, webhookCount, webhookEvents, webhookPolls, webhookRates
} from "./options.ts"
import { provenanceAtEnd, type provenanceAtStart } from "./provenance.ts"
import { OPS, PARTS } from "./seed.ts"
import { benchDir, log, median, roundTo } from "./util.ts"

const sum = <A>(xs: ReadonlyArray<A>, f: (x: A) => number) => xs.reduce((a, x) => a + f(x), 0)
const problemsByRound = (rs: ReadonlyArray<{ round: number; problems: ReadonlyArray<string> }>) =>
  rs.flatMap((r) => r.problems.map((p) => `round ${r.round}: ${p}`))

/** create, list and lifecycle: per db and scenario, the median over the rounds. */
const summarize = (results: ReadonlyArray<RunResult>) =>
  dbs.flatMap((db) =>
    scenarios.filter((s) => !isWebhook(s)).map((scenario) => {
      const rs = results.filter((r) => r.db === db && r.scenario === scenario)
      const ls = rs.map((r) => ({ round: r.round, ...r.lifecycle! }))
      return {
        db,
        scenario,
        runs: rs.length,
        reqPerSec: roundTo(median(rs.map((r) => r.reqPerSec))),
        reqPerSecAll: rs.map((r) => roundTo(r.reqPerSec)),
        p50Ms: median(rs.map((r) => r.latencyMs.p50)),
        p99Ms: median(rs.map((r) => r.latencyMs.p99)),
        requests: sum(rs, (r) => r.requests),
        non2xx: sum(rs, (r) => r.non2xx + r.warmup.non2xx),
        errors: sum(rs, (r) => r.errors + r.timeouts + r.warmup.errors),
        maxCpuBusyBefore: Math.max(...rs.map((r) => r.cpuBusyBefore)),
        ...(scenario === "lifecycle"
          ? {
            lifecycle: {
              cyclesPerSec: roundTo(median(ls.map((l) => l.cyclesPerSec))),
              cyclesPerSecAll: ls.map((l) => l.cyclesPerSec),
              cycles: sum(ls, (l) => l.cycles),
              stepP50Ms: Object.fromEntries(STEPS.map((step) => [step, median(ls.map((l) => l.perStep[step].p50 ?? NaN))])),
              stepP99Ms: Object.fromEntries(STEPS.map((step) => [step, median(ls.map((l) => l.perStep[step].p99 ?? NaN))])),
              verified: `${sum(ls, (l) => l.verify.passed)}/${sum(ls, (l) => l.verify.sampled)}`,
              exhausted: ls.filter((l) => l.exhausted).length,
              problems: problemsByRound(ls)
            }
          }
          : {})
      }
    })
  )

/** The webhook scenarios: per db and case (scenario, poll, rate), the median over the rounds. */
const summarizeWebhooks = (webhookResults: ReadonlyArray<WebhookRun>) =>
  dbs.flatMap((db) =>
    cases.filter((c) => isWebhook(c.scenario)).map((c) => {
      const rs = webhookResults.filter((r) => r.db === db && r.scenario === c.scenario && r.poll === (c.poll ?? "default") && r.lag?.rate === c.rate)
      const tp = rs.flatMap((r) => (r.throughput === undefined ? [] : [r.throughput]))
      const lg = rs.flatMap((r) => (r.lag === undefined ? [] : [r.lag]))
      return {
        db,
        scenario: c.scenario,
        poll: c.poll ?? "default",
        ...(c.rate === undefined ? {} : { rate: c.rate }),
        webhooks: webhookCount,
        runs: rs.length,
        deliveries: sum(rs, (r) => r.receiver.deliveries),
        signaturesOk: sum(rs, (r) => r.receiver.signaturesOk),
        failed: sum(rs, (r) => Number(r.server.failed) + Number(r.server.logs_not_succeeded)),
        maxCpuBusyBefore: Math.max(...rs.map((r) => r.cpuBusyBefore)),
        ...(tp.length > 0
          ? {
            throughput: {
              events: tp[0]!.events,
              deliveriesPerSec: roundTo(median(tp.map((t) => t.deliveriesPerSec))),
              deliveriesPerSecAll: tp.map((t) => t.deliveriesPerSec),
              recordedPerSec: roundTo(median(tp.map((t) => t.recordedPerSec))),
              steadyPerSec: roundTo(median(tp.map((t) => t.steadyPerSec))),
              firstArrivalMs: median(tp.map((t) => t.firstArrivalMs))
            }
          }
          : {}),
        ...(lg.length > 0
          ? {
            lag: {
              achievedPerSec: roundTo(median(lg.map((l) => l.achievedPerSec))),
              p50Ms: median(lg.map((l) => l.lagMs.p50 ?? NaN)),
              p90Ms: median(lg.map((l) => l.lagMs.p90 ?? NaN)),
              p99Ms: median(lg.map((l) => l.lagMs.p99 ?? NaN)),
              maxMs: median(lg.map((l) => l.lagMs.max ?? NaN)),
              p50MsAll: lg.map((l) => l.lagMs.p50),
              p99MsAll: lg.map((l) => l.lagMs.p99),
              firstP50Ms: median(lg.map((l) => l.firstLagMs.p50 ?? NaN)),
              apiP50Ms: median(lg.map((l) => l.apiMs.p50 ?? NaN)),
              apiP99Ms: median(lg.map((l) => l.apiMs.p99 ?? NaN)),
              late: sum(lg, (l) => l.late)
            }
          }
          : {}),
        problems: problemsByRound(rs)
      }
    })
  )

/** The results' `settings`: what was run, and how. */
const settings = () => ({
  dbs,
  scenarios,
  durationSec: duration,
  warmupSec: warmup,
  connections,
  pipelining: 1,
  rounds,
  seedJobs,
  shape: { partsPerJob: PARTS, operationsPerPart: OPS, listLimit: LIST_LIMIT },
  ...(scenarios.includes("lifecycle")
    ? {
      lifecycle: {
        steps: STEPS,
        sizedForCyclesPerSec: lifecycleRate,
        seedJobs: lifecycleJobs(),
        operations: lifecycleJobs() * PARTS * OPS,
        operators: OPERATORS,
        verifySample: VERIFY_SAMPLE
      }
    }
    : {}),
  ...(scenarios.some(isWebhook)
    ? {
      webhooks: {
        webhooks: webhookCount,
        events: ["job.created"],
        create: "1 job × 1 part × 1 operation (job.created + part.created)",
        ...(scenarios.includes("webhook-throughput") ? { throughputEvents: webhookEvents, throughputPoll: "default" } : {}),
        ...(scenarios.includes("webhook-lag") ? { lagRatesPerSec: webhookRates, lagPolls: webhookPolls } : {}),
        pollDefault: "250 millis (MES_WEBHOOK_POLL_INTERVAL unset)",
        concurrencyDefault: 32,
        batchSizeDefault: 100
      }
    }
    : {}),
  pglite: pgliteDir === "temp" ? "temp dataDir" : "in memory",
  postgresPool: pgPool,
  waitIdleSec: waitIdle
})

/** A markdown table on stdout after a blank line; `align` has one letter per column, l(eft) or r(ight). */
const printTable = (head: ReadonlyArray<string>, align: string, rows: ReadonlyArray<ReadonlyArray<unknown>>) => {
  if (rows.length === 0) return
  const line = (cells: ReadonlyArray<unknown>) => `| ${cells.map((c) => `${c}`).join(" | ")} |`
  console.log("")
  console.log(line(head))
  console.log(`|${[...align].map((a) => (a === "r" ? "---:" : "---")).join("|")}|`)
  for (const row of rows) console.log(line(row))
}

const printTables = (summary: ReturnType<typeof summarize>, webhookSummary: ReturnType<typeof summarizeWebhooks>) => {
  printTable(
    ["scenario", "db", "req/s (median)", "p50 ms", "p99 ms", "non-2xx", "errors", "runs"],
    "llrrrrrr",
    summary.map((s) => [s.scenario, s.db, s.reqPerSec, s.p50Ms, s.p99Ms, s.non2xx, s.errors, s.runs])
  )
  printTable(
    ["webhook-throughput", "db", "webhooks × events", "deliveries/s (median)", "per round", "recorded/s", "steady/s", "first ms", "failed", "signatures ok"],
    "lllrlrrrrr",
    webhookSummary.flatMap((s) => {
      const t = s.throughput
      return t === undefined ? [] : [[
        `poll ${s.poll}`, s.db, `${s.webhooks} × ${t.events}`, t.deliveriesPerSec, t.deliveriesPerSecAll.join(" / "), t.recordedPerSec,
        t.steadyPerSec, t.firstArrivalMs, s.failed, `${s.signaturesOk}/${s.deliveries}`
      ]]
    })
  )
  printTable(
    ["webhook-lag", "db", "events/s (achieved)", "lag p50 ms", "p90", "p99", "max", "p50 / p99 per round", "API p50 / p99 ms", "failed", "signatures ok"],
    "lllrrrrllrr",
    webhookSummary.flatMap((s) => {
      const l = s.lag
      return l === undefined ? [] : [[
        `poll ${s.poll}`, s.db, `${s.rate} (${l.achievedPerSec})`, l.p50Ms, l.p90Ms, l.p99Ms, l.maxMs,
        l.p50MsAll.map((p, i) => `${p} / ${l.p99MsAll[i]}`).join(", "), `${l.apiP50Ms} / ${l.apiP99Ms}`, s.failed, `${s.signaturesOk}/${s.deliveries}`
      ]]
    })
  )
  printTable(
    ["lifecycle", "db", "cycles/s (median)", "per round", "p50 ms start/pause/resume/complete", "verified", "exhausted"],
    "llrllrr",
    summary.flatMap((s) => {
      const l = s.lifecycle
      return l === undefined ? [] : [[
        "lifecycle", s.db, l.cyclesPerSec, l.cyclesPerSecAll.join(" / "), STEPS.map((step) => l.stepP50Ms[step]).join(" / "), l.verified, l.exhausted
      ]]
    })
  )
}

/** Sets exit code 1 for non-2xx answers or errors, and for any problem of a lifecycle or webhook run. */
const failures = (summary: ReturnType<typeof summarize>, webhookSummary: ReturnType<typeof summarizeWebhooks>) => {
  const bad = summary.filter((s) => s.non2xx > 0 || s.errors > 0)
  if (bad.length > 0) {
    log(`FAILED: non-2xx responses or errors in ${bad.map((s) => `${s.db}/${s.scenario}`).join(", ")}`)
    process.exitCode = 1
  }
  for (const s of webhookSummary) {
    if (s.problems.length > 0) {
      log(`FAILED: ${s.db}/${s.scenario} poll ${s.poll}${"rate" in s ? ` rate ${s.rate}/s` : ""}: ${s.problems.join("; ")}`)
      process.exitCode = 1
    }
  }
  for (const s of summary) {
    if (s.lifecycle !== undefined && s.lifecycle.problems.length > 0) {
      log(`FAILED: ${s.db}/lifecycle: ${s.lifecycle.problems.join("; ")}`)
      process.exitCode = 1
    }
  }
}

/** Summarizes all runs, prints the tables, writes the results JSON (unless --no-write) and sets the exit code. */
export const report = async (
  started: Date,
  atStart: ReturnType<typeof provenanceAtStart>,
  results: ReadonlyArray<RunResult>,
  webhookResults: ReadonlyArray<WebhookRun>
) => {
  const summary = summarize(results)
  const webhookSummary = summarizeWebhooks(webhookResults)
  const { machine, git } = await provenanceAtEnd(atStart)
  const json = {
    date: started.toISOString(),
    command: `pnpm bench ${process.argv.slice(2).join(" ")}`.trim(),
    settings: settings(),
    machine,
    git,
    summary,
    ...(webhookResults.length > 0 ? { webhookSummary } : {}),
    runs: results,
    ...(webhookResults.length > 0 ? { webhookRuns: webhookResults } : {})
  }
  printTables(summary, webhookSummary)
  if (!noWrite) {
    const file = resolve(out ?? join(benchDir, "results", `${started.toISOString().slice(0, 10)}-${label}.json`))
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, JSON.stringify(json, null, 2) + "\n")
    log(`wrote ${relative(process.cwd(), file)}`)
  }
  failures(summary, webhookSummary)
}
