// The jobs the benchmark creates: the nested create payloads, unique job numbers, and the seed before each run.
import { http, type Server } from "./server-process.ts"

export const PARTS = 5
export const OPS = 4
/** Part of every job number the runner makes, so no two invocations collide. */
export const runId = Date.now().toString(36)

/** The nested create payload: 1 job × 5 parts × 4 operations. */
export const job = (jobNumber: string) => ({
  job_number: jobNumber,
  customer: "Bench Customer",
  parts: Array.from({ length: PARTS }, (_, i) => ({
    part_number: `P-${i + 1}`,
    quantity: 2,
    operations: Array.from({ length: OPS }, (_, j) => ({ operation_name: `Op ${j + 1}`, sequence: j + 1 }))
  }))
})

/** The small nested create of the webhook scenarios: 1 job × 1 part × 1 operation (one job.created, one part.created). */
export const smallJob = (jobNumber: string) => ({
  job_number: jobNumber,
  customer: "Bench Customer",
  parts: [{ part_number: "P-1", quantity: 2, operations: [{ operation_name: "Op 1", sequence: 1 }] }]
})

/** POST /api-jobs of `body`, which must answer 201 (the checks by hand). */
export const createJob = async (server: Server, body: unknown) => {
  const r = await http(server, "POST", "/api-jobs", body)
  if (r.status !== 201) throw new Error(`POST /api-jobs answered ${r.status}: ${r.text.slice(0, 500)}`)
  return r
}

/** Seeds `n` jobs; with `collect`, returns their operation ids as [job][part][operation]. */
export const seed = async (server: Server, n: number, collect = false) => {
  const ops: Array<Array<Array<string>>> = []
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const r = await http(server, "POST", "/api-jobs", job(`SEED-${String(i).padStart(6, "0")}`))
      if (r.status !== 201) throw new Error(`seed POST /api-jobs answered ${r.status}: ${r.text.slice(0, 500)}`)
      if (collect) {
        const parts = r.json().data?.parts
        const ids = Array.isArray(parts) ? parts.map((p: any) => (p.operations ?? []).map((o: any) => String(o.operation_id))) : []
        if (ids.length !== PARTS || ids.some((p: Array<string>) => p.length !== OPS)) {
          throw new Error(`seed reply has no ${PARTS} × ${OPS} operation ids: ${r.text.slice(0, 500)}`)
        }
        ops[i] = ids
      }
    }
  }
  await Promise.all(Array.from({ length: 4 }, worker))
  return ops
}

/** Creates `n` operators (profiles) and returns their ids. */
export const seedOperators = async (server: Server, n: number) => {
  const operators: Array<string> = []
  for (let i = 1; i <= n; i++) {
    const r = await http(server, "POST", "/api-profiles", { display_name: `Op ${i}` })
    const id = r.status === 201 ? r.json().data?.profile?.id : undefined
    if (typeof id !== "string") throw new Error(`POST /api-profiles answered ${r.status}: ${r.text.slice(0, 500)}`)
    operators.push(id)
  }
  return operators
}
