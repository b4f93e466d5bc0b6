// /api-parts (spec 4.2)
import * as Effect from "effect/Effect"
import { Parts, Sync } from "@mes/domain"
import { resourceHandlers, syncHandlers } from "./shared.ts"

export const partHandlers = Effect.gen(function*() {
  const parts = yield* Parts
  const sync = yield* Sync
  return {
    ...resourceHandlers("parts", { singular: "part", plural: "parts" }, parts),
    ...syncHandlers("parts", sync.part, (body) => sync.bulk("parts", body))
  }
})
