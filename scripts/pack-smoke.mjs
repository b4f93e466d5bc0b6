#!/usr/bin/env node
// Issue 13 item 1, proven: packs every package under packages/ (`pnpm pack`), installs the tarballs with npm into a
// fresh project outside the workspace, and there embeds mes on the embedded database (a server on a free port,
// a tenant, a job created and read over HTTP) and runs the packed `mes` bin. Needs the build (`pnpm build`).
//   node scripts/pack-smoke.mjs
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
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

const main = () => {
  const packages = readdirSync(join(root, "packages"))
  const versions = JSON.parse(readFileSync(join(root, "packages/adapters-http/package.json"), "utf8")).dependencies
  const deps = {}
  for (const dir of packages) {
    const manifest = JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8"))
    const printed = pnpm(["pack", "--pack-destination", tarballs], join(root, "packages", dir)).trim().split("\n").at(-1)
    deps[manifest.name] = `file:${printed.startsWith("/") ? printed : join(tarballs, printed)}`
  }
  console.error(`packed: ${Object.keys(deps).join(", ")}`)
  run("mkdir", ["-p", project], work)
  writeFileSync(join(project, "package.json"), JSON.stringify({
    name: "embeds-mes",
    private: true,
    type: "module",
    dependencies: { ...deps, effect: versions.effect, "@effect/platform-node": versions["@effect/platform-node"] },
    // workspace:* became versions in the tarballs: npm takes them from the tarballs, not the registry
    overrides: deps
  }, null, 2))
  writeFileSync(join(project, "embed.mjs"), `
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpServer } from "effect/http"
import { CurrentTenant, DomainLive, Jobs, Tenants } from "@mes/domain"
import { Db, StoresPg } from "@mes/adapters-pg"
import { HttpServerLive, UrlGuardLive } from "@mes/adapters-http"

const app = HttpServerLive({ port: 0, host: "127.0.0.1" }).pipe(
  Layer.provideMerge(DomainLive), Layer.provideMerge(UrlGuardLive), Layer.provideMerge(StoresPg), Layer.provideMerge(Db.fromEnv({ migrate: true })))

await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
  const context = yield* Layer.build(app)
  const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address) + "/functions/v1"
  const { tenant, apiKey } = yield* Context.get(context, Tenants).create({ name: "Embedded" })
  const headers = { authorization: "Bearer " + apiKey, "content-type": "application/json" }
  const body = { job_number: "EMBED-1", parts: [{ part_number: "P", quantity: 2, operations: [{ operation_name: "Cut", sequence: 1 }] }] }
  const created = yield* Effect.promise(() => fetch(url + "/api-jobs", { method: "POST", headers, body: JSON.stringify(body) }).then((r) => r.json()))
  if (!created.success) throw new Error("create failed: " + JSON.stringify(created))
  const read = yield* Effect.promise(() => fetch(url + "/api-jobs?id=" + created.data.job_id, { headers }).then((r) => r.json()))
  if (read.data.job.parts[0].operations[0].operation_name !== "Cut") throw new Error("read failed: " + JSON.stringify(read))
  // the domain directly, as the tenant
  const jobs = yield* Context.get(context, Jobs).list({}).pipe(Effect.provideService(CurrentTenant, { id: tenant.id, plan: tenant.plan, via: "user" }))
  if (jobs.total !== 1) throw new Error("list failed")
  console.log("embedded mes answered: job " + read.data.job.job_number + " with " + read.data.job.parts.length + " part")
})))
`)
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], project)
  const env = { MES_DATA_DIR: join(work, "data"), DATABASE_URL: "" }
  process.stdout.write(run("node", ["embed.mjs"], project, env))
  process.stdout.write(run("npx", ["--no-install", "mes", "--version"], project, env))
  const tenant = JSON.parse(run("npx", ["--no-install", "mes", "tenant", "create", "--name", "From the packed CLI", "--json"], project, { ...env, MES_DATA_DIR: join(work, "cli-data") }))
  if (!/^svc_live_/.test(tenant.api_key)) throw new Error("mes tenant create printed no key")
  console.log("the packed mes bin created tenant " + tenant.tenant_id)
}

try {
  main()
  console.log("pack smoke: ok")
} finally {
  rmSync(work, { recursive: true, force: true })
}
