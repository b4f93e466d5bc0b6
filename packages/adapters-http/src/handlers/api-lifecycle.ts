// /api-job-lifecycle and /api-operation-lifecycle (spec 4.4, 4.5): one line per action.
import * as Effect from "effect/Effect"
import { isUuid, type JobAction, Jobs, type OperationAction, Operations, requireId } from "@mes/domain"
import { BadRequest } from "@mes/domain"
import { type Handlers, ok } from "../server.ts"

export const lifecycleHandlers = Effect.gen(function*() {
  const jobs = yield* Jobs
  const operations = yield* Operations
  const job = (action: JobAction): Handlers<never>[string] => ({ query }) =>
    requireId(query).pipe(
      Effect.flatMap((id) => jobs.transition(id, action)),
      Effect.map((r) => ok({ job: r.job, operation: r.action, previous_status: r.previous_status, new_status: r.new_status }))
    )
  const operation = (action: OperationAction): Handlers<never>[string] => ({ query }) =>
    Effect.gen(function*() {
      const id = yield* requireId(query)
      const userId = query.user_id === undefined || query.user_id === "" ? undefined : query.user_id
      if (userId !== undefined && !isUuid(userId)) return yield* new BadRequest({ message: "query parameter user_id must be a UUID" })
      return ok(yield* operations.transition(id, action, userId?.toLowerCase()))
    })
  return {
    "jobLifecycle.start": job("start"),
    "jobLifecycle.stop": job("stop"),
    "jobLifecycle.complete": job("complete"),
    "jobLifecycle.resume": job("resume"),
    "operationLifecycle.start": operation("start"),
    "operationLifecycle.pause": operation("pause"),
    "operationLifecycle.resume": operation("resume"),
    "operationLifecycle.complete": operation("complete")
  } satisfies Handlers<never>
})
