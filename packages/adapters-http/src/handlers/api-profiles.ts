// /api-profiles (DECISIONS: profiles): thin handlers over the Profiles use cases.
import { Effect } from "effect"
import { Profiles, requireId } from "@mes/domain"
import { ok, type Handlers } from "../server.ts"
import { listReply } from "./shared.ts"

export const profileHandlers = Effect.gen(function*() {
  const profiles = yield* Profiles
  return {
    "profiles.list": ({ query }) =>
      query.id !== undefined
        ? requireId(query).pipe(Effect.flatMap(profiles.get), Effect.map((profile) => ok({ profile })))
        : profiles.list(query).pipe(Effect.map(listReply("profiles"))),
    "profiles.create": ({ body }) => profiles.create(body).pipe(Effect.map((profile) => ok({ profile }, 201))),
    "profiles.update": ({ query, body }) =>
      requireId(query).pipe(Effect.flatMap((id) => profiles.update(id, body)), Effect.map((profile) => ok({ profile }))),
    "profiles.remove": ({ query }) =>
      requireId(query).pipe(Effect.flatMap((id) => profiles.remove(id).pipe(Effect.as(ok({ id, deleted: true })))))
  } satisfies Handlers<never>
})
