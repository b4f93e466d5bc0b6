// /api-issues (spec 4.7): list or read one, create, update. No DELETE (the spec has none).
import * as Effect from "effect/Effect"
import { Issues, requireId } from "@mes/domain"
import { type Handlers, ok } from "../server.ts"
import { listReply } from "./shared.ts"

export const issueHandlers = Effect.map(Effect.service(Issues), (issues): Handlers<never> => ({
  "issues.list": ({ query }) =>
    query.id !== undefined
      ? requireId(query).pipe(Effect.flatMap(issues.get), Effect.map((issue) => ok({ issue })))
      : issues.list(query).pipe(Effect.map(listReply("issues"))),
  "issues.create": ({ body }) => issues.create(body).pipe(Effect.map((issue) => ok({ issue }, 201))),
  "issues.update": ({ query, body }) =>
    requireId(query).pipe(Effect.flatMap((id) => issues.update(id, body)), Effect.map((issue) => ok({ issue })))
}))
