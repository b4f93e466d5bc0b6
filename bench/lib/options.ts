// The runner's command line: parsing, checks and --help (the header comment of bench/run.ts).
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"

const { values: opt } = parseArgs({
  options: {
    db: { type: "string", default: "pglite,postgres" }, // pglite | postgres | pglite,postgres
    scenario: { type: "string", default: "create,list" }, // create | list | create,list
    duration: { type: "string", default: "10" }, // measured seconds per run
    warmup: { type: "string", default: "2" }, // unmeasured seconds before each run
    connections: { type: "string", default: "10" },
    seed: { type: "string", default: "200" }, // jobs seeded before every run (list needs ≥ 100)
    "lifecycle-rate": { type: "string", default: "600" }, // lifecycle: cycles/s the seed is sized for (never run out)
    webhooks: { type: "string", default: "4" }, // webhook scenarios: webhooks registered, each subscribed to job.created
    "webhook-events": { type: "string", default: "2500" }, // webhook-throughput: events in the burst
    "webhook-rates": { type: "string", default: "50,200" }, // webhook-lag: events/s
    "webhook-poll": { type: "string", default: "default" }, // webhook-lag: MES_WEBHOOK_POLL_INTERVAL values (default = unset)
    rounds: { type: "string", default: "1" }, // repetitions; db order alternates (A B, B A, …)
    "database-url": { type: "string" }, // admin URL; default DATABASE_URL or postgres://postgres@127.0.0.1:5432/test
    "pglite-dir": { type: "string", default: "memory" }, // memory | temp
    "pg-pool": { type: "string", default: "10" }, // server's pool size on postgres
    out: { type: "string" }, // results JSON path (default bench/results/<date>-run.json)
    label: { type: "string", default: "run" },
    "wait-idle": { type: "string", default: "0" }, // wait up to N s for the machine to go idle before measuring
    "no-write": { type: "boolean", default: false },
    help: { type: "boolean", default: false }
  }
})

if (opt.help) {
  const lines = readFileSync(fileURLToPath(new URL("../run.ts", import.meta.url)), "utf8").split("\n")
  console.log(lines.slice(0, lines.findIndex((l) => !l.startsWith("//"))).join("\n"))
  process.exit(0)
}

const list = <T extends string>(raw: string, allowed: ReadonlyArray<T>, what: string): Array<T> => {
  const items = raw === "all" ? [...allowed] : raw.split(",").map((s) => s.trim()).filter((s) => s !== "")
  for (const item of items) if (!allowed.includes(item as T)) throw new Error(`unknown ${what} "${item}" (${allowed.join("|")}|all)`)
  return items as Array<T>
}
const int = (name: string, raw: string, min: number, max: number) => {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer in [${min}, ${max}], got ${raw}`)
  return n
}

export type DbKind = "pglite" | "postgres"
export type LoadScenarioName = "create" | "list" | "lifecycle" | "time-entry"
export type WebhookScenario = "webhook-throughput" | "webhook-lag"
export type Scenario = LoadScenarioName | WebhookScenario
export const isWebhook = (s: Scenario): s is WebhookScenario => s === "webhook-throughput" || s === "webhook-lag"
export const dbs = list<DbKind>(opt.db!, ["pglite", "postgres"], "db")
// `webhooks` stands for both webhook scenarios
export const scenarios = [...new Set(list<Scenario>(
  opt.scenario!.split(",").flatMap((s) => (s.trim() === "webhooks" ? ["webhook-throughput", "webhook-lag"] : [s])).join(","),
  ["create", "list", "lifecycle", "time-entry", "webhook-throughput", "webhook-lag"],
  "scenario"
))]
export const duration = int("duration", opt.duration!, 1, 600)
export const warmup = int("warmup", opt.warmup!, 0, 60)
export const connections = int("connections", opt.connections!, 1, 1000)
export const seedJobs = int("seed", opt.seed!, 0, 100_000)
export const rounds = int("rounds", opt.rounds!, 1, 50)
export const pgPool = int("pg-pool", opt["pg-pool"]!, 1, 90)
export const waitIdle = int("wait-idle", opt["wait-idle"]!, 0, 600)
export const lifecycleRate = int("lifecycle-rate", opt["lifecycle-rate"]!, 1, 100_000)
export const webhookCount = int("webhooks", opt.webhooks!, 1, 50)
export const webhookEvents = int("webhook-events", opt["webhook-events"]!, 1, 200_000)
export const webhookRates = opt["webhook-rates"]!.split(",").map((r) => int("webhook-rates", r.trim(), 1, 5_000))
export const webhookPolls = opt["webhook-poll"]!.split(",").map((p) => p.trim()).filter((p) => p !== "")
for (const p of webhookPolls) {
  if (p !== "default" && !/^\d+(ms|s)$/.test(p)) throw new Error(`--webhook-poll takes default or values like 50ms, 1s; got ${p}`)
}
if (scenarios.includes("list") && seedJobs < 200) throw new Error("--seed must be ≥ 200 for the list scenario")
export const adminUrl = opt["database-url"] ?? (process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test")
{
  const host = new URL(adminUrl).hostname
  if (!["127.0.0.1", "localhost", "[::1]", "::1"].includes(host)) throw new Error(`refusing non-loopback database host ${host}`)
}
export const pgliteDir = opt["pglite-dir"]!
export const out = opt.out
export const label = opt.label!
export const noWrite = opt["no-write"]!

/** One run: a scenario, and for the webhook scenarios its poll interval (and, for lag, its event rate). */
export interface Case {
  readonly scenario: Scenario
  /** MES_WEBHOOK_POLL_INTERVAL for the server, "default" = unset (the dispatcher's 250 ms) */
  readonly poll?: string
  /** webhook-lag: events per second */
  readonly rate?: number
}
export const cases: ReadonlyArray<Case> = scenarios.flatMap((scenario): Array<Case> =>
  scenario === "webhook-lag"
    ? webhookPolls.flatMap((poll) => webhookRates.map((rate) => ({ scenario, poll, rate })))
    : scenario === "webhook-throughput"
    ? [{ scenario, poll: "default" }]
    : [{ scenario }]
)
