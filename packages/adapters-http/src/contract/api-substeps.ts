// /api-substeps (spec 4.8): GET (list or ?id=), POST, PATCH ?id=, DELETE ?id= (DELETE is ours, docs/DECISIONS.md).
// api.ts imports this file, so the shared `crud` helper is passed in rather than imported (no import cycle).
import { Substep, SubstepCreate, substepListSpec, SubstepPatch } from "@mes/domain"
import type { crud } from "./api.ts"

export { substepListSpec }

export const substepsGroup = (make: typeof crud) =>
  make("substeps", "/api-substeps", {
    singular: "substep",
    plural: "substeps",
    record: Substep,
    list: substepListSpec,
    create: SubstepCreate,
    patch: SubstepPatch
  })
