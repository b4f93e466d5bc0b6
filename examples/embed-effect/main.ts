// Run: npx tsx main.ts (PORT, DATABASE_URL or MES_DATA_DIR from the environment)
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { address, App, demo } from "./app.ts"

const main = Effect.gen(function*() {
  console.log(`listening on ${yield* address}`)
  const result = yield* demo
  yield* Console.log(`job ${result.jobId}: operation ${result.moves.join(", ")}; API key ${result.apiKey}`)
  return yield* Effect.never
})

main.pipe(Effect.provide(Layer.fresh(App(Number(process.env.PORT ?? 3001)))), NodeRuntime.runMain)
