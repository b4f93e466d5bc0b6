// /api-cells (spec 4.12): thin handlers over the Cells use cases.
import { Effect } from "effect"
import { Cells, requireId } from "@mes/domain"
import { ok, type Handlers } from "../server.ts"
import { listReply } from "./shared.ts"

export const cellHandlers = Effect.gen(function*() {
  const cells = yield* Cells
  return {
    "cells.list": ({ query }) =>
      query.id !== undefined
        ? requireId(query).pipe(Effect.flatMap(cells.get), Effect.map((cell) => ok({ cell })))
        : cells.list(query).pipe(Effect.map(listReply("cells"))),
    "cells.create": ({ body }) => cells.create(body).pipe(Effect.map((cell) => ok({ cell }, 201))),
    "cells.update": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => cells.update(id, body)), Effect.map((cell) => ok({ cell }))),
    "cells.remove": ({ query }) =>
      requireId(query).pipe(Effect.flatMap((id) => cells.remove(id).pipe(Effect.as(ok({ id, deleted: true })))))
  } satisfies Handlers<never>
})
