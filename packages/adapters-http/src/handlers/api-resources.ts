// /api-resources (spec 4.12) and its sync (spec 4.10); /api-materials (spec 4.12)
import * as Effect from "effect/Effect"
import { Materials, Resources, Sync } from "@mes/domain"
import { resourceHandlers, syncHandlers } from "./shared.ts"

export const resourceHandlersOf = Effect.gen(function*() {
  const sync = yield* Sync
  return {
    ...resourceHandlers("resources", { singular: "resource", plural: "resources" }, yield* Resources),
    ...syncHandlers("resources", sync.resource, (body) => sync.bulk("resources", body)),
    ...resourceHandlers("materials", { singular: "material", plural: "materials" }, yield* Materials)
  }
})
