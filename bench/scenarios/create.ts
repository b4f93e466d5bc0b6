// create: POST /api-jobs, a nested create of 1 job × 5 parts × 4 operations with a unique job_number per request.
import { seedJobs } from "../lib/options.ts"
import { createJob, job, runId, seed } from "../lib/seed.ts"
import type { LoadScenario } from "./load.ts"

let jobCounter = 0

export const create: LoadScenario = {
  jobs: seedJobs,
  seed: async (srv, round) => {
    await seed(srv, seedJobs)
    return {
      check: async () => {
        const r = await createJob(srv, job(`CHECK-${runId}-${round}`))
        const parts = r.json().data?.parts
        return {
          status: r.status,
          parts: Array.isArray(parts) ? parts.length : null,
          opsPerPart: Array.isArray(parts) ? [...new Set(parts.map((p: any) => p.operations?.length))] : null,
          requestBytes: Buffer.byteLength(JSON.stringify(job("B-xxxxxxxx-000000"))),
          responseBytes: Buffer.byteLength(r.text)
        }
      },
      phase: (_, { base, headers, sample }) => ({
        requests: [{
          method: "POST",
          path: `${base.pathname}/api-jobs`,
          headers,
          // a fresh body per request: unique job_number (run id + global counter)
          setupRequest: (req) => ({ ...req, body: JSON.stringify(job(`B-${runId}-${++jobCounter}`)) }),
          onResponse: (status, body) => sample(status, body)
        }]
      })
    }
  }
}
