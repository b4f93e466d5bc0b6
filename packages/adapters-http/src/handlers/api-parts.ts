// /api-parts (spec 4.2)
import { Effect } from "effect"
import { Parts, requireId, Sync } from "@mes/domain"
import { type Handlers, ok } from "../server.ts"
import { listReply, syncReply } from "./shared.ts"

export const partHandlers = Effect.gen(function*() {
  const parts = yield* Parts
  const sync = yield* Sync
  return {
    "parts.list": ({ query }) =>
      query.id !== undefined
        ? requireId(query).pipe(Effect.flatMap(parts.get), Effect.map((part) => ok({ part })))
        : parts.list(query).pipe(Effect.map(listReply("parts"))),
    "parts.create": ({ body }) => parts.create(body).pipe(Effect.map((part) => ok({ part }, 201))),
    "parts.update": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => parts.update(id, body)), Effect.map((part) => ok({ part }))),
    "parts.remove": ({ query }) =>
      requireId(query).pipe(Effect.flatMap((id) => parts.remove(id).pipe(Effect.as(ok({ id, deleted: true }))))),
    "parts.sync": ({ body }) => sync.part(body).pipe(Effect.map(syncReply)),
    "parts.bulkSync": ({ body }) => sync.bulk("parts", body).pipe(Effect.map((r) => ok(r)))
  } satisfies Handlers<never>
})
