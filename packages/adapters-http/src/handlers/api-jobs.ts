// /api-jobs (spec 4.1): thin handlers over the Jobs use cases.
import { Effect } from "effect"
import { type JobDetail, Jobs, requireId, Sync } from "@mes/domain"
import { ok, type Handlers } from "../server.ts"
import { listReply, syncReply } from "./shared.ts"

/** DECISIONS: job create answers data.job plus the spec's flat form (job_id, parts[].part_id ...). */
const created = (job: JobDetail) => ({
  job,
  job_id: job.id,
  job_number: job.job_number,
  parts: job.parts.map((p) => ({
    part_id: p.id,
    part_number: p.part_number,
    operations: p.operations.map((o) => ({ operation_id: o.id, operation_name: o.operation_name }))
  }))
})

export const jobHandlers = Effect.gen(function*() {
  const jobs = yield* Jobs
  const sync = yield* Sync
  return {
    "jobs.list": ({ query }) =>
      query.id !== undefined
        ? requireId(query).pipe(Effect.flatMap(jobs.get), Effect.map((job) => ok({ job })))
        : jobs.list(query).pipe(Effect.map(listReply("jobs"))),
    "jobs.create": ({ body }) => jobs.create(body).pipe(Effect.map((job) => ok(created(job), 201))),
    "jobs.update": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => jobs.update(id, body)), Effect.map((job) => ok({ job }))),
    "jobs.remove": ({ query }) =>
      requireId(query).pipe(Effect.flatMap((id) => jobs.remove(id).pipe(Effect.as(ok({ id, deleted: true }))))),
    "jobs.sync": ({ body }) => sync.job(body).pipe(Effect.map(syncReply)),
    "jobs.bulkSync": ({ body }) => sync.bulk("jobs", body).pipe(Effect.map((r) => ok(r)))
  } satisfies Handlers<never>
})
