// /api-cells (spec 4.12)
import * as Effect from "effect/Effect"
import { Cells } from "@mes/domain"
import { resourceHandlers } from "./shared.ts"

export const cellHandlers = Effect.map(Effect.service(Cells), (cells) => resourceHandlers("cells", { singular: "cell", plural: "cells" }, cells))
