// time-entry: POST /api-time-entries, an ended time entry by hand (an operator's time booked after the fact) on the
// seeded operations in turn, so that few requests at once wait for one operation's lock. Each sets the operation's
// actual_time again (spec 2.8); the check by hand makes one and compares actual_time with its entries' sum.
import { seedJobs } from "../lib/options.ts"
import { seed, seedOperators } from "../lib/seed.ts"
import { http, type Server } from "../lib/server-process.ts"
import { OPERATORS } from "./lifecycle.ts"
import type { LoadScenario } from "./load.ts"

/** An ended entry of 15 minutes, its start `n` minutes after a fixed day began. */
const entry = (operation: string, operator: string, n: number) => {
  const start = Date.UTC(2026, 0, 1, 6) + (n % 100_000) * 60_000
  return { operation_id: operation, user_id: operator, start_time: new Date(start).toISOString(), end_time: new Date(start + 15 * 60_000).toISOString() }
}

const get = async (srv: Server, path: string) => {
  const r = await http(srv, "GET", path)
  if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}: ${r.text.slice(0, 500)}`)
  return r.json().data
}

/** One entry by hand on `operation`, then actual_time against the sum of its entries. */
const checkOne = async (srv: Server, operation: string, operator: string) => {
  const r = await http(srv, "POST", "/api-time-entries", entry(operation, operator, 0))
  if (r.status !== 201) throw new Error(`POST /api-time-entries answered ${r.status}: ${r.text.slice(0, 500)}`)
  const actual = (await get(srv, `/api-operations?id=${operation}`)).operation.actual_time
  const sum = (await get(srv, `/api-time-entries?operation_id=${operation}&limit=1000`)).time_entries
    .reduce((a: number, e: { duration_minutes: number }) => a + e.duration_minutes, 0)
  if (Math.abs(actual - sum) > 1e-6) throw new Error(`actual_time ${actual} is not the entries' sum ${sum}`)
  return { status: r.status, durationMinutes: r.json().data.time_entry.duration_minutes, actualTime: actual, responseBytes: Buffer.byteLength(r.text) }
}

export const timeEntry: LoadScenario = {
  jobs: seedJobs,
  seed: async (srv) => {
    const operators = await seedOperators(srv, OPERATORS)
    const operations = (await seed(srv, seedJobs, true)).flat(2)
    let n = 0
    return {
      check: () => checkOne(srv, operations[0]!, operators[0]!),
      phase: (_, { base, headers, sample }) => ({
        requests: [{
          method: "POST",
          path: `${base.pathname}/api-time-entries`,
          headers,
          setupRequest: (req) => {
            const i = ++n
            return { ...req, body: JSON.stringify(entry(operations[i % operations.length]!, operators[i % operators.length]!, i)) }
          },
          onResponse: (status, body) => sample(status, body)
        }]
      })
    }
  }
}
