// An Effect HTTP app of your own with mes mounted beside its routes, and mes's domain called directly.
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { ApiRoutes } from "@mes/adapters-http"
import { AppLive } from "@mes/cli"
import { CurrentTenant, Jobs, Operations, Tenants } from "@mes/domain"

/** Your own routes, served by the same router as mes's (AppLive provides mes's services to them too). */
const MyRoutes = HttpRouter.use(Effect.fnUntraced(function*(router) {
  yield* router.add("GET", "/hello", Effect.succeed(HttpServerResponse.text("hello from my Effect app\n")))
}))

/** mes's REST API (/functions/v1/...) and your routes on one server, over the database of the environment. */
export const App = (port: number) =>
  HttpRouter.serve(Layer.mergeAll(ApiRoutes(), MyRoutes)).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
    Layer.provideMerge(AppLive())
  )

/** The domain without HTTP: a tenant, a job with one operation, and that operation's lifecycle. */
export const demo = Effect.gen(function*() {
  const { apiKey, tenant } = yield* (yield* Tenants).create({ name: "Effect shop" })
  return yield* Effect.gen(function*() {
    const created = yield* (yield* Jobs).create({
      job_number: "FX-1",
      parts: [{ part_number: "BRACKET", quantity: 4, operations: [{ operation_name: "Laser cut", sequence: 1 }] }]
    })
    const operationId = created.parts[0]!.operations[0]!.operation_id
    const operations = yield* Operations
    const started = yield* operations.transition(operationId, "start")
    const completed = yield* operations.transition(operationId, "complete")
    return { apiKey, jobId: created.job_id, operationId, moves: [started, completed].map((m) => `${m.previous_status} → ${m.new_status}`) }
  }).pipe(Effect.provideService(CurrentTenant, { id: tenant.id, plan: tenant.plan, via: "user" }))
})

/** The server's address, for logs. */
export const address = Effect.map(Effect.service(HttpServer.HttpServer), (s) => HttpServer.formatAddress(s.address))
