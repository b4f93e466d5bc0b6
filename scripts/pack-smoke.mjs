#!/usr/bin/env node
// Issue 13 item 1, proven: packs every package under packages/ (`pnpm pack`), checks what each tarball holds,
// installs the tarballs with npm into a fresh project outside the workspace, typechecks a TypeScript consumer
// against the packed declarations, and there embeds mes on the embedded database (a server on a free port, a
// tenant, a job created over HTTP and read back with @mes/client) and runs the packed `mes` bin.
// Needs the build (`pnpm build`).
//   node scripts/pack-smoke.mjs
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const work = mkdtempSync(join(tmpdir(), "mes-pack-smoke-"))
const tarballs = join(work, "tarballs")
const project = join(work, "project")
const run = (cmd, args, cwd, env = {}) =>
  execFileSync(cmd, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
const pnpm = (args, cwd) => run("npx", ["-y", "pnpm@10.20.0", ...args], cwd)
const fail = (message) => {
  throw new Error(`pack smoke: ${message}`)
}

/** What a published package must hold, and must not: its manifest as packed and its file list. */
const checkTarball = (tarball) => {
  const files = run("tar", ["-tzf", tarball], work).split("\n").filter(Boolean).map((f) => f.replace(/^package\//, ""))
  const manifest = JSON.parse(run("tar", ["-xzOf", tarball, "package/package.json"], work))
  const name = manifest.name
  const stray = files.filter((f) => /(^|\/)(src|test)\/|\.test\.|\.tsbuildinfo$/.test(f))
  if (stray.length > 0) fail(`${name} packs workspace-only files: ${stray.join(", ")}`)
  if (!files.includes("README.md")) fail(`${name} has no README.md`)
  if (JSON.stringify(manifest).includes("workspace:")) fail(`${name} still names workspace: versions`)
  for (const [subpath, conditions] of Object.entries(manifest.exports ?? fail(`${name} has no exports`))) {
    if ("development" in conditions) fail(`${name} exports ${subpath} under the development condition (sources not packed)`)
    for (const condition of ["types", "import"]) {
      const target = conditions[condition]?.replace(/^\.\//, "")
      if (target === undefined || !files.includes(target)) fail(`${name} exports ${subpath} → ${condition} ${target}: not in the tarball`)
    }
  }
  for (const bin of Object.values(manifest.bin ?? {})) if (!files.includes(bin.replace(/^\.\//, ""))) fail(`${name}: bin ${bin} not packed`)
  if (name === "@mes/adapters-pg" && !files.some((f) => /^migrations\/\d{4}_.+\.sql$/.test(f))) fail("@mes/adapters-pg packs no migrations")
  if (name === "@mes/cli") {
    // one build: prepack bundles again, which drops the files a rebuild keeps for a server still running
    const built = JSON.parse(run("tar", ["-xzOf", tarball, "package/dist/bundle/build.json"], work)).files
    const packed = files.filter((f) => f.startsWith("dist/bundle/")).map((f) => f.slice("dist/bundle/".length))
    const extra = packed.filter((f) => !built.includes(f) && f !== "build.json" && f !== "package.json")
    if (extra.length > 0 || !built.every((f) => packed.includes(f))) fail(`@mes/cli packs a bundle other than its last build's (extra: ${extra.join(", ")})`)
  }
  return name
}

// A TypeScript consumer: every entry point resolves to the packed declarations, and they are real types (an
// unused @ts-expect-error is an error, so a declaration that fell back to `any` fails the check).
const consumerTs = `
import * as Effect from "effect/Effect"
import { Jobs } from "@mes/domain"
import { Db, StoresPg } from "@mes/adapters-pg"
import { ApiRoutes, HttpServerLive } from "@mes/adapters-http"
import { Api } from "@mes/adapters-http/contract"
import { MesRpcs } from "@mes/adapters-http/rpc"
import { createMcpServer, restBackend } from "@mes/adapters-mcp"
import { createMesClient, MesApiError } from "@mes/client"
import { createMesHandler } from "@mes/cli"

export const used = [Db, StoresPg, ApiRoutes, HttpServerLive, Api, MesRpcs, createMcpServer, restBackend]
export const total: Effect.Effect<number, unknown, unknown> = Effect.gen(function*() {
  return (yield* (yield* Jobs).list({})).total
})
// @ts-expect-error: a page's total is a number
export const wrong: Effect.Effect<string, unknown, unknown> = total
const mes = createMesClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "svc_live_x" })
export const page = () => mes.jobs.list({ query: { limit: 1 } })
// @ts-expect-error: the client has no such method
export const bad = () => mes.jobs.frobnicate()
export const status = (e: unknown): number | undefined => (e instanceof MesApiError ? e.statusCode : undefined)
export const handler: (request: Request) => Promise<Response> = createMesHandler().handler
`

const embedMjs = `
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpServer } from "effect/http"
import { CurrentTenant, DomainLive, Jobs, Tenants } from "@mes/domain"
import { Db, StoresPg } from "@mes/adapters-pg"
import { HttpServerLive, UrlGuardLive } from "@mes/adapters-http"
import { createMesClient, MesApiError } from "@mes/client"

const app = HttpServerLive({ port: 0, host: "127.0.0.1" }).pipe(
  Layer.provideMerge(DomainLive), Layer.provideMerge(UrlGuardLive), Layer.provideMerge(StoresPg), Layer.provideMerge(Db.fromEnv({ migrate: true })))

await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const context = yield* Layer.build(app)
  const base = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)
  const url = base + "/functions/v1"
  const { tenant, apiKey } = yield* Context.get(context, Tenants).create({ name: "Embedded" })
  const headers = { authorization: "Bearer " + apiKey, "content-type": "application/json" }
  const body = { job_number: "EMBED-1", parts: [{ part_number: "P", quantity: 2, operations: [{ operation_name: "Cut", sequence: 1 }] }] }
  const created = yield* Effect.promise(() => fetch(url + "/api-jobs", { method: "POST", headers, body: JSON.stringify(body) }).then((r) => r.json()))
  if (!created.success) throw new Error("create failed: " + JSON.stringify(created))
  const read = yield* Effect.promise(() => fetch(url + "/api-jobs?id=" + created.data.job_id, { headers }).then((r) => r.json()))
  if (read.data.job.parts[0].operations[0].operation_name !== "Cut") throw new Error("read failed: " + JSON.stringify(read))
  // the packed client
  const client = createMesClient({ baseUrl: base, apiKey })
  const listed = yield* Effect.promise(() => client.jobs.list({ query: { limit: 10 } }))
  if (listed.jobs.map((j) => j.job_number).join() !== "EMBED-1") throw new Error("client list failed: " + JSON.stringify(listed))
  const refused = yield* Effect.promise(() => createMesClient({ baseUrl: base, apiKey: "svc_live_wrong" }).jobs.list({ query: {} }).then(() => undefined, (e) => e))
  if (!(refused instanceof MesApiError) || refused.statusCode !== 401) throw new Error("client error failed: " + refused)
  yield* Effect.promise(() => client.close())
  // the domain directly, as the tenant
  const jobs = yield* Context.get(context, Jobs).list({}).pipe(Effect.provideService(CurrentTenant, { id: tenant.id, plan: tenant.plan, via: "user" }))
  if (jobs.total !== 1) throw new Error("list failed")
  console.log("embedded mes answered: job " + read.data.job.job_number + " with " + read.data.job.parts.length + " part, read back by @mes/client")
})))
`

const main = () => {
  const deps = {}
  for (const dir of readdirSync(join(root, "packages"))) {
    const printed = pnpm(["pack", "--pack-destination", tarballs], join(root, "packages", dir)).trim().split("\n").at(-1)
    const tarball = printed.startsWith("/") ? printed : join(tarballs, printed)
    deps[checkTarball(tarball)] = `file:${tarball}`
  }
  console.error(`packed and checked: ${Object.keys(deps).join(", ")}`)
  const versions = JSON.parse(readFileSync(join(root, "packages/adapters-http/package.json"), "utf8")).dependencies
  const rootDev = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies
  mkdirSync(project)
  writeFileSync(join(project, "package.json"), JSON.stringify({
    name: "embeds-mes",
    private: true,
    type: "module",
    dependencies: { ...deps, effect: versions.effect, "@effect/platform-node": versions["@effect/platform-node"] },
    devDependencies: { "@types/node": rootDev["@types/node"] },
    // workspace:* became versions in the tarballs: npm takes them from the tarballs, not the registry
    overrides: deps
  }, null, 2))
  writeFileSync(join(project, "embed.mjs"), embedMjs)
  writeFileSync(join(project, "consumer.ts"), consumerTs)
  writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
    compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], types: ["node"], strict: true, noEmit: true, skipLibCheck: true },
    files: ["consumer.ts"]
  }))
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], project)
  // the workspace's compiler, on the installed packages only (no development condition: dist/*.d.ts)
  run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], project)
  console.log("a TypeScript consumer typechecks against the packed declarations")
  const env = { MES_DATA_DIR: join(work, "data"), DATABASE_URL: "" }
  process.stdout.write(run("node", ["embed.mjs"], project, env))
  process.stdout.write(run("npx", ["--no-install", "mes", "--version"], project, env))
  const tenant = JSON.parse(run("npx", ["--no-install", "mes", "tenant", "create", "--name", "From the packed CLI", "--json"], project, { ...env, MES_DATA_DIR: join(work, "cli-data") }))
  if (!/^svc_live_/.test(tenant.api_key)) fail("mes tenant create printed no key")
  console.log("the packed mes bin created tenant " + tenant.tenant_id)
}

try {
  main()
  console.log("pack smoke: ok")
} finally {
  rmSync(work, { recursive: true, force: true })
}
