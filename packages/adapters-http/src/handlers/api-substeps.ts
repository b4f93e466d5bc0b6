// /api-substeps (spec 4.8; DELETE is ours, docs/DECISIONS.md)
import * as Effect from "effect/Effect"
import { Substeps } from "@mes/domain"
import { resourceHandlers } from "./shared.ts"

export const substepHandlers = Effect.map(
  Effect.service(Substeps),
  (substeps) => resourceHandlers("substeps", { singular: "substep", plural: "substeps" }, substeps)
)
