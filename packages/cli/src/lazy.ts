// The database, stores and adapters load only when a command runs that needs them, so `mes --help`
// and flag errors answer without loading the HTTP server, the SQL driver or PGlite.
import * as Effect from "effect/Effect"

/** The application module (app.ts), imported on first use. */
export const loadApp = Effect.promise(() => import("./app.ts"))

/** Runs `effect` with the domain services over the database of the environment (see app.ts AppLive). */
export const withApp = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(loadApp, (app) => app.withLayer(effect, app.AppLive()))
