// /api-batches, /api-batch-lifecycle (spec 4.6) and /api-time-entries.
import * as Effect from "effect/Effect"
import { Batches, requireId, TimeEntries } from "@mes/domain"
import { type Handlers, ok } from "../server.ts"
import { resourceHandlers } from "./shared.ts"

export const batchHandlers = Effect.gen(function*() {
  const batches = yield* Batches
  const timeEntries = yield* TimeEntries
  return {
    ...resourceHandlers("batches", { singular: "batch", plural: "batches" }, batches),
    ...resourceHandlers("timeEntries", { singular: "time_entry", plural: "time_entries" }, timeEntries),
    "batchLifecycle.start": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => batches.transition(id, "start", body)), Effect.map((r) => ok(r))),
    "batchLifecycle.stop": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => batches.transition(id, "stop", body)), Effect.map((r) => ok(r))),
    "batchLifecycle.addOperations": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => batches.addOperations(id, body)), Effect.map((batch) => ok({ batch })))
  } satisfies Handlers<never>
})
