// /api-jobs (spec 4.1)
import * as Effect from "effect/Effect"
import { type JobCreated, Jobs, Sync } from "@mes/domain"
import { ok } from "../server.ts"
import { resourceHandlers, syncHandlers } from "./shared.ts"

/** DECISIONS: job create answers data.job plus the spec's flat form (job_id, parts[].part_id ...). */
const created = (job: JobCreated) => ok(job, 201)

export const jobHandlers = Effect.gen(function*() {
  const jobs = yield* Jobs
  const sync = yield* Sync
  return {
    ...resourceHandlers("jobs", { singular: "job", plural: "jobs" }, jobs, created),
    ...syncHandlers("jobs", sync.job, (body) => sync.bulk("jobs", body))
  }
})
