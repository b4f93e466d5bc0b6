// /api-cells (spec 4.12) and its sync (spec 4.10)
import * as Effect from "effect/Effect"
import { Cells, Sync } from "@mes/domain"
import { resourceHandlers, syncHandlers } from "./shared.ts"

export const cellHandlers = Effect.gen(function*() {
  const sync = yield* Sync
  return {
    ...resourceHandlers("cells", { singular: "cell", plural: "cells" }, yield* Cells),
    ...syncHandlers("cells", sync.cell, (body) => sync.bulk("cells", body))
  }
})
