// list: GET /api-jobs?limit=100, 100 jobs each with its 5 parts (≈376 KB).
import { seedJobs } from "../lib/options.ts"
import { http } from "../lib/server-process.ts"
import { seed } from "../lib/seed.ts"
import type { LoadScenario } from "./load.ts"

export const LIST_LIMIT = 100

export const list: LoadScenario = {
  jobs: seedJobs,
  seed: async (srv) => {
    await seed(srv, seedJobs)
    return {
      check: async () => {
        const r = await http(srv, "GET", `/api-jobs?limit=${LIST_LIMIT}`)
        if (r.status !== 200) throw new Error(`GET /api-jobs?limit=${LIST_LIMIT} answered ${r.status}: ${r.text.slice(0, 500)}`)
        const jobs = r.json().data?.jobs
        if (!Array.isArray(jobs)) throw new Error(`list reply has no data.jobs: ${r.text.slice(0, 500)}`)
        const parts = jobs.map((j: any) => (Array.isArray(j.parts) ? j.parts.length : null))
        const check = {
          status: r.status,
          jobs: jobs.length,
          partsPerJob: [...new Set(parts)],
          opsPerPart: [...new Set(jobs.flatMap((j: any) => (j.parts ?? []).map((p: any) => (Array.isArray(p.operations) ? p.operations.length : null))))],
          responseBytes: Buffer.byteLength(r.text),
          pagination: r.json().data?.pagination
        }
        if (jobs.length !== LIST_LIMIT) throw new Error(`list returned ${jobs.length} jobs, expected ${LIST_LIMIT}`)
        return check
      },
      phase: (_, { base, headers, sample }) => ({
        requests: [{ method: "GET", path: `${base.pathname}/api-jobs?limit=${LIST_LIMIT}`, headers, onResponse: (status, body) => sample(status, body) }]
      })
    }
  }
}
