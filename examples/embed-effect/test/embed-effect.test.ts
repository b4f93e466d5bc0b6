// The example's app on a free port: its own route, the domain called directly, and mes's REST API showing it.
import { join } from "node:path"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import { afterAll, expect, it } from "vitest"
import { address, App, demo } from "../app.ts"
import { scratchDir } from "../../../packages/adapters-http/test/scratch.ts"

const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

it("serves its route and mes's, and runs an operation's lifecycle through the domain", async () => {
  // PostgreSQL when the tests run against it (a database per run is not needed: the tenant is new), else PGlite
  const env = { ...process.env, MES_DATA_DIR: join(scratchDir("embed-effect-"), "data") } as Record<string, string>
  const context = await Effect.runPromise(
    Layer.buildWithScope(App(0).pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))), scope)
  )
  const run = <A>(effect: Effect.Effect<A, unknown, any>) => Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A, unknown>)
  const base = await run(address)
  expect(await (await fetch(`${base}/hello`)).text()).toBe("hello from my Effect app\n")
  const result = await run(demo)
  expect(result.moves).toEqual(["not_started → in_progress", "in_progress → completed"])
  const headers = { authorization: `Bearer ${result.apiKey}` }
  const job = (await (await fetch(`${base}/functions/v1/api-jobs?id=${result.jobId}`, { headers })).json()) as any
  expect(job.data.job).toMatchObject({ job_number: "FX-1", parts: [{ status: "completed", operations: [{ status: "completed" }] }] })
})
