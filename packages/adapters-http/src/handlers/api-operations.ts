// /api-operations (spec 4.3)
import { Effect } from "effect"
import { Operations, requireId, Sync } from "@mes/domain"
import { type Handlers, ok } from "../server.ts"
import { listReply, syncReply } from "./shared.ts"

export const operationHandlers = Effect.gen(function*() {
  const operations = yield* Operations
  const sync = yield* Sync
  return {
    "operations.list": ({ query }) =>
      query.id !== undefined
        ? requireId(query).pipe(Effect.flatMap(operations.get), Effect.map((operation) => ok({ operation })))
        : operations.list(query).pipe(Effect.map(listReply("operations"))),
    "operations.create": ({ body }) => operations.create(body).pipe(Effect.map((operation) => ok({ operation }, 201))),
    "operations.update": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => operations.update(id, body)), Effect.map((operation) => ok({ operation }))),
    "operations.remove": ({ query }) =>
      requireId(query).pipe(Effect.flatMap((id) => operations.remove(id).pipe(Effect.as(ok({ id, deleted: true }))))),
    "operations.sync": ({ body }) => sync.operation(body).pipe(Effect.map(syncReply)),
    "operations.bulkSync": ({ body }) => sync.bulk("operations", body).pipe(Effect.map((r) => ok(r)))
  } satisfies Handlers<never>
})
