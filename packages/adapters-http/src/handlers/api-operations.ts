// /api-operations (spec 4.3)
import * as Effect from "effect/Effect"
import { Operations, Sync } from "@mes/domain"
import { resourceHandlers, syncHandlers } from "./shared.ts"

export const operationHandlers = Effect.gen(function*() {
  const operations = yield* Operations
  const sync = yield* Sync
  return {
    ...resourceHandlers("operations", { singular: "operation", plural: "operations" }, operations),
    ...syncHandlers("operations", sync.operation, (body) => sync.bulk("operations", body))
  }
})
