import { Context, Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { requestServices } from "../src/request-services.ts"

const Greeting = Context.Service<string>("test/Greeting")

describe("requestServices (the routes' services, per request)", () => {
  const routes = () => {
    const routesScope = Effect.runSync(Scope.make())
    return { routesScope, provide: requestServices(Context.make(Greeting, "from the routes").pipe(Context.add(Scope.Scope, routesScope))) }
  }

  it("gives a handler the routes' services and keeps the request's own Scope: a scoped resource ends with its request", async () => {
    const { routesScope, provide } = routes()
    const requestScope = Effect.runSync(Scope.make())
    const released: Array<string> = []
    const handler = Effect.gen(function*() {
      yield* Effect.acquireRelease(Effect.void, () => Effect.sync(() => void released.push("resource")))
      return { greeting: yield* Greeting, scope: yield* Scope.Scope }
    })
    const seen = await Effect.runPromise(provide(handler).pipe(Effect.provideService(Scope.Scope, requestScope)))
    expect(seen.greeting).toBe("from the routes")
    expect(seen.scope).toBe(requestScope)
    expect(released).toEqual([])
    await Effect.runPromise(Scope.close(requestScope, Exit.void))
    expect(released).toEqual(["resource"])
    await Effect.runPromise(Scope.close(routesScope, Exit.void))
    expect(released).toEqual(["resource"])
  })

  it("a service the request holds in another instance is the routes' one inside the handler", async () => {
    const { provide } = routes()
    const seen = await Effect.runPromise(provide(Effect.service(Greeting)).pipe(
      Effect.provideService(Greeting, "from the request"),
      Effect.provideService(Scope.Scope, Effect.runSync(Scope.make()))
    ))
    expect(seen).toBe("from the routes")
  })
})
