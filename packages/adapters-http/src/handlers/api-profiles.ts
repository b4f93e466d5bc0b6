// /api-profiles (DECISIONS: profiles)
import * as Effect from "effect/Effect"
import { Profiles } from "@mes/domain"
import { resourceHandlers } from "./shared.ts"

export const profileHandlers = Effect.map(
  Effect.service(Profiles),
  (profiles) => resourceHandlers("profiles", { singular: "profile", plural: "profiles" }, profiles)
)
