// /api-substeps (spec 4.8): GET (list or ?id=), POST, PATCH ?id=, DELETE ?id= (DELETE is ours, docs/DECISIONS.md).
import { Substep, SubstepCreate, substepListSpec, SubstepPatch } from "@mes/domain"
import { crud } from "./envelope.ts"

export { substepListSpec }

export class SubstepsGroup extends crud("substeps", "/api-substeps", {
  singular: "substep",
  plural: "substeps",
  record: Substep,
  list: substepListSpec,
  create: SubstepCreate,
  patch: SubstepPatch
}) {}
