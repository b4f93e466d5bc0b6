// Load benchmark of the HTTP API: scenarios × databases, each against a fresh server process.
//
//   pnpm bench                                   # create+list × pglite+postgres, 10 s each, 1 round
//   pnpm bench --db pglite --scenario list --duration 5 --connections 10
//   pnpm bench --rounds 3 --wait-idle 60 --label skeleton   # → bench/results/<date>-skeleton.json
//   pnpm bench --scenario lifecycle --rounds 3 --wait-idle 60 --label lifecycle
//   pnpm bench --scenario webhooks --rounds 3 --wait-idle 60 --webhook-poll default,50ms --label webhooks
//
// Options: --db pglite|postgres|all
//   --scenario create|list|lifecycle|time-entry|webhook-throughput|webhook-lag|webhooks|all (default create,list;
//     webhooks = both webhook scenarios; all = every scenario)
//   --duration 10  --warmup 2  --connections 10  --rounds 1 (db order alternates A B / B A)
//   --seed 200  --lifecycle-rate 600  --wait-idle 0
//   --webhooks 4  --webhook-events 2500  --webhook-rates 50,200  --webhook-poll default[,50ms]
//   --database-url <admin url, loopback only>  --pglite-dir memory|temp  --pg-pool 10
//   --out <file> | --label <name> | --no-write
//
// For every (round, db, scenario) it
//   1. (postgres) creates a fresh database mes_bench_<ts>_<rand> on the loopback server,
//   2. spawns `node --import tsx bench/server.ts` (a separate process, so the
//      load generator and the server do not share an event loop) and waits for its ready line,
//   3. seeds --seed jobs (5 parts × 4 operations each) through the API, then runs ANALYZE (after seeding,
//      never on empty tables: see /work/shared/STACK.md §11). lifecycle also creates 5 operators and seeds
//      enough jobs for (warm-up + duration) × --lifecycle-rate cycles, each operation used once,
//   4. checks one request (lifecycle: one whole cycle) by hand, runs a short warm-up, then measures with autocannon,
//   5. (lifecycle) verifies a sample of completed operations through the API and all of them in SQL,
//   6. stops the server process (quit on stdin, SIGKILL by pid after 10 s) and drops the database.
// Everything is bounded: fixed durations, fixed seed counts, per-step timeouts and a global watchdog.
// The webhook scenarios run the dispatcher inside the server (WebhookDispatcher.layerConfig, as `mes serve`) and
// a receiver in this process (bench/receiver.ts) that checks both signatures of every delivery:
//   webhook-throughput: --webhook-events job.created events go straight into the outbox (SQL) while the
//     dispatcher is stopped; then it starts, and deliveries/s = all deliveries ÷ (last arrival − start);
//   webhook-lag: POST /api-jobs (1 × 1 × 1) at each --webhook-rates events/s, open loop, for --duration s after
//     --warmup s; lag = arrival − the event's `timestamp`, p50/p99/max; once per --webhook-poll value.
//   Both require every delivery to arrive once and be recorded `succeeded` after one attempt.
// Exit code 1 when any response was non-2xx, any request errored or timed out, (lifecycle) the
// operations ran out or a verification failed, or (webhooks) a delivery was missing, duplicated, malformed or failed.

// The runner's parts: lib/options.ts (the options above), lib/server-process.ts and lib/database.ts (a fresh
// server and database per run), scenarios/*.ts (create, list, lifecycle on a common autocannon run in load.ts;
// the webhook scenarios in webhooks.ts), lib/report.ts (medians, tables, the results JSON).
import { cases, dbs, duration, isWebhook, rounds, waitIdle, warmup } from "./lib/options.ts"
import { provenanceAtStart } from "./lib/provenance.ts"
import { report } from "./lib/report.ts"
import { killAll } from "./lib/server-process.ts"
import { log } from "./lib/util.ts"
import { create } from "./scenarios/create.ts"
import { lifecycle } from "./scenarios/lifecycle.ts"
import { list } from "./scenarios/list.ts"
import { type RunResult, runLoad } from "./scenarios/load.ts"
import { timeEntry } from "./scenarios/time-entry.ts"
import { runWebhooks, type WebhookRun } from "./scenarios/webhooks.ts"

const loadScenarios = { create, list, lifecycle, "time-entry": timeEntry }

// per run: its phases plus 300 s of setup and checks; webhook runs may also wait up to 240 s for deliveries
const budgetMs = rounds * dbs.length * cases.reduce((a, c) => a + duration + warmup + waitIdle + 300 + (isWebhook(c.scenario) ? 240 : 0), 0) * 1000
const watchdog = setTimeout(() => {
  log(`watchdog: exceeded ${budgetMs / 1000}s, killing the server and exiting`)
  killAll()
  process.exit(2)
}, budgetMs)
watchdog.unref()
process.on("SIGINT", () => {
  killAll()
  process.exit(130)
})

const main = async () => {
  const started = new Date()
  const atStart = provenanceAtStart()
  const results: Array<RunResult> = []
  const webhookResults: Array<WebhookRun> = []
  for (let round = 1; round <= rounds; round++) {
    // interleave: A B in odd rounds, B A in even rounds (STACK.md §11: ±15 % noise between runs)
    const order = round % 2 === 1 ? dbs : [...dbs].reverse()
    for (const db of order) {
      for (const c of cases) {
        if (isWebhook(c.scenario)) webhookResults.push(await runWebhooks(round, db, c))
        else results.push(await runLoad(round, db, c.scenario, loadScenarios[c.scenario]))
      }
    }
  }
  await report(started, atStart, results, webhookResults)
}

main()
  .catch((e) => {
    log(`failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`)
    killAll()
    process.exitCode = 1
  })
  .finally(() => clearTimeout(watchdog))
