// A real server on an ephemeral port over a fresh database, one per test file.
import { type AddressInfo, connect, createServer, type Socket } from "node:net"
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import { HttpServer } from "effect/http"
import { DomainLive, type Plan, Tenants } from "@mes/domain"
import { StoresPg, testDatabase } from "@mes/adapters-pg"
import { type Deployment, HttpServerLive, urlGuardFor, UrlGuardLive } from "../src/index.ts"
import { SqlClient } from "effect/sql/SqlClient"
import { expect, vi } from "vitest"
import { scratchDir } from "./scratch.ts"
import { startTcpProxy } from "./tcp-proxy.ts"

export interface Harness {
  readonly url: string
  /** Creates a tenant and returns its first live API key. */
  readonly tenant: (name?: string) => Promise<{ tenantId: string; key: string }>
  /** Creates a tenant and returns a client authenticated as it. */
  readonly as: (name: string) => Promise<{ tenantId: string; key: string; api: ReturnType<typeof client> }>
  /** Runs raw SQL against the test database (setup only). */
  readonly sql: (statement: string, params?: ReadonlyArray<unknown>) => Promise<ReadonlyArray<Record<string, unknown>>>
  /** Runs an effect with the server's services (database, stores, domain), e.g. to build a dispatcher layer. */
  readonly run: <A>(effect: Effect.Effect<A, unknown, any>) => Promise<A>
  /** Moves a tenant to another plan (its daily request limit in cloud mode). */
  readonly setPlan: (tenantId: string, plan: Plan) => Promise<unknown>
  readonly close: () => Promise<void>
}

/**
 * `deployment` overrides MES_DEPLOYMENT for the SSRF guard (e.g. a cloud-mode server); `env` sets
 * further configuration (MES_* variables) for this server only.
 */
export const startServer = async (
  options: {
    readonly deployment?: Deployment
    readonly env?: Readonly<Record<string, string>>
    /** The database (default: a fresh test database). */
    readonly database?: ReturnType<typeof testDatabase>
    /** Routes beside the API's, as `mes serve` mounts the MCP endpoint. */
    readonly extraRoutes?: Parameters<typeof HttpServerLive>[2]
    /** Settings an embedding service gives HttpServerLive, over the environment's. */
    readonly server?: Parameters<typeof HttpServerLive>[1]
  } = {}
): Promise<Harness> => {
  const scope = Effect.runSync(Scope.make())
  const db = options.database ?? testDatabase()
  const app = HttpServerLive({ port: 0, host: "127.0.0.1" }, options.server, options.extraRoutes).pipe(
    Layer.provideMerge(DomainLive),
    Layer.provideMerge(options.deployment === undefined ? UrlGuardLive : urlGuardFor(options.deployment)),
    Layer.provideMerge(StoresPg),
    Layer.provideMerge(db),
    // uploads go to a directory of this server's own unless the test names one
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({
      env: { ...process.env, ...options.env, MES_STORAGE_DIR: options.env?.MES_STORAGE_DIR ?? scratchDir("mes-storage-") } as Record<string, string>
    })))
  )
  // a server that does not start leaves no database behind
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void))))
  const run = <A>(effect: Effect.Effect<A, unknown, any>) => Effect.runPromise(Effect.provideContext(effect, context) as Effect.Effect<A, unknown>)
  const tenant = (name = "Acme") =>
    run(Effect.gen(function*() {
      const { tenant, apiKey } = yield* (yield* Tenants).create({ name })
      return { tenantId: tenant.id, key: apiKey }
    }))
  const address = await run(Effect.map(Effect.service(HttpServer.HttpServer), (s) => HttpServer.formatAddress(s.address)))
  return {
    url: `${address}/functions/v1`,
    tenant,
    as: async (name) => {
      const t = await tenant(name)
      return { ...t, api: client(`${address}/functions/v1`, t.key) }
    },
    sql: (statement, params = []) =>
      run(Effect.gen(function*() {
        const sql = yield* SqlClient
        return (yield* sql.unsafe(statement, params)) as ReadonlyArray<Record<string, unknown>>
      })),
    run,
    setPlan: (tenantId, plan) => run(Effect.flatMap(Effect.service(Tenants), (t) => t.setPlan(tenantId, plan))),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/**
 * A server whose database connections go through a TCP proxy the test cuts, black-holes and restores (PostgreSQL
 * only: DATABASE_URL names the server). `close` restores the proxy, closes the server, then the proxy.
 */
export const startServerThroughProxy = async (options: Omit<NonNullable<Parameters<typeof startServer>[0]>, "database"> = {}) => {
  const target = new URL(process.env.DATABASE_URL!)
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) })
  const h = await startServer({ ...options, database: testDatabase({ viaPort: proxy.port }) })
  return {
    proxy,
    h,
    close: async () => {
      proxy.restore()
      await h.close()
      await proxy.close()
    }
  }
}

export interface Reply<T = any> {
  readonly status: number
  readonly body: T
  readonly headers: Headers
}

/** A small JSON client bound to a key; `raw` sends a body string as is. */
export const client = (base: string, key?: string) => {
  const send = async (method: string, path: string, body?: unknown, options: { raw?: string; headers?: Record<string, string> } = {}): Promise<Reply> => {
    const headers: Record<string, string> = { "content-type": "application/json", ...options.headers }
    if (key !== undefined) headers.authorization = `Bearer ${key}`
    const res = await fetch(base + path, {
      method,
      headers,
      ...(options.raw !== undefined ? { body: options.raw } : body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // keep text; tests assert JSON where it matters
    }
    return { status: res.status, body: parsed, headers: res.headers }
  }
  return {
    get: (path: string, options?: { headers?: Record<string, string> }) => send("GET", path, undefined, options),
    post: (path: string, body?: unknown, options?: { raw?: string; headers?: Record<string, string> }) => send("POST", path, body, options),
    put: (path: string, body?: unknown, options?: { raw?: string; headers?: Record<string, string> }) => send("PUT", path, body, options),
    patch: (path: string, body?: unknown, options?: { raw?: string; headers?: Record<string, string> }) => send("PATCH", path, body, options),
    delete: (path: string) => send("DELETE", path),
    send
  }
}

/** A minimal valid nested job: `parts` parts with `ops` operations each. */
export const nestedJob = (jobNumber: string, parts = 1, ops = 1, extra: Record<string, unknown> = {}) => ({
  job_number: jobNumber,
  customer: "Acme Steel",
  ...extra,
  parts: Array.from({ length: parts }, (_, i) => ({
    part_number: `P-${i + 1}`,
    quantity: 2,
    operations: Array.from({ length: ops }, (_, j) => ({ operation_name: `Op ${j + 1}`, sequence: j + 1 }))
  }))
})

/** Asserts the spec 7.1 error envelope with statusCode equal to the HTTP status and a JSON body (DECISIONS). */
export const expectError = (res: Reply, status: number, code: string) => {
  expect({ status: res.status, body: res.body }).toMatchObject({
    status,
    body: { success: false, error: { code, statusCode: status, message: expect.any(String) } }
  })
  expect(res.body.error.message.length).toBeGreaterThan(0)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
}

/**
 * Everything a server on 127.0.0.1:`port` writes back by the time the connection closes, after `send` wrote to the
 * socket (raw HTTP text, sent as is, or written bit by bit by a function): what no HTTP client would send.
 */
export const rawExchange = (port: number | string, send: string | ((socket: Socket) => unknown)) =>
  new Promise<string>((resolve) => {
    const socket = connect(Number(port), "127.0.0.1", () => typeof send === "string" ? socket.write(send) : send(socket))
    let out = ""
    socket.setEncoding("utf8").on("data", (d: string) => (out += d)).on("close", () => resolve(out))
  })

/** A JSON POST to `path` that declares a body of 100 bytes and sends 12 of them, keeping the connection open. */
export const stalledPost = (path: string, key: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"job_number`

/** Waits `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** A port that was free a moment ago: nothing listens on it (a connection is refused), unless taken since. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

/** Sends again every 100 ms, at most `tries` more times, while `again(answer)` holds (a server coming back after an outage); the last answer. */
export const retryWhile = async <T>(send: () => Promise<T>, again: (answer: T) => boolean, tries: number): Promise<T> => {
  let answer = await send()
  for (let i = 0; i < tries && again(answer); i++) answer = await sleep(100).then(send)
  return answer
}

/** Runs `f` with the console captured: what it logged, one string a call (Effect's logger writes there). */
export const capturingLogs = async <T>(f: () => Promise<T>): Promise<{ readonly value: T; readonly logged: ReadonlyArray<string> }> => {
  const logged: Array<string> = []
  const spies = (["log", "error", "warn", "info"] as const).map((m) =>
    vi.spyOn(console, m).mockImplementation((...args: Array<unknown>) => void logged.push(args.map(String).join(" "))))
  try {
    return { value: await f(), logged }
  } finally {
    spies.forEach((s) => s.mockRestore())
  }
}

/** An error's details, in order, each as "field constraint". */
export const detailsOf = (res: Reply): Array<string> =>
  (res.body.error.details as Array<{ field: string; constraint: string }>).map((d) => `${d.field} ${d.constraint}`)

/** A 422 whose details include one at `field` with `constraint`. */
export const expectDetail = (res: Reply, field: string, constraint: string) => {
  expectError(res, 422, "VALIDATION_ERROR")
  expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field, constraint })]))
}
