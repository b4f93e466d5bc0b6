// `mes migrate`: applies pending migrations and lists what ran (a second run applies nothing).
import * as Effect from "effect/Effect"
import { Command } from "effect/cli"
import { plural } from "@mes/domain"
import { loadApp } from "../lazy.ts"
import { jsonFlag, output, reportErrors } from "../output.ts"

const label = ([id, name]: readonly [number, string]) => `${String(id).padStart(4, "0")}_${name}`

export const migrate = Command.make("migrate", { json: jsonFlag }, ({ json }) =>
  Effect.flatMap(loadApp, (app) => app.withLayer(app.migrate, app.DatabaseLive({ migrate: false }))).pipe(
    Effect.flatMap((applied) =>
      output(
        json,
        { applied: applied.map(([id, name]) => ({ id, name })) },
        applied.length === 0
          ? "No pending migrations; the database is up to date."
          : `Applied ${plural(applied.length, "migration")}: ${applied.map(label).join(", ")}`
      )
    ),
    reportErrors
  )).pipe(Command.withDescription("Apply pending database migrations and print what ran"), Command.withExamples([{ command: "mes migrate" }, { command: "DATABASE_URL=postgres://mes@db/mes mes migrate --json" }]))
