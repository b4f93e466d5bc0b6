// Runs the example as a process: its own route answers, and mes answers under /mes with a CLI-made key.
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, expect, it } from "vitest"
import { scratchDir } from "../../../packages/adapters-http/test/scratch.ts"

const here = fileURLToPath(new URL("..", import.meta.url))
const MES = fileURLToPath(new URL("../../../packages/cli/bin/mes.js", import.meta.url))
const env = { ...process.env, MES_DATA_DIR: join(scratchDir("embed-node-"), "data"), PORT: "0", DATABASE_URL: process.env.DATABASE_URL ?? "" }
let child: ChildProcess | undefined
let database: string | undefined
afterAll(async () => {
  if (child !== undefined && child.exitCode === null) {
    const exited = new Promise((resolve) => child!.once("exit", resolve))
    child.kill("SIGTERM")
    await exited
  }
  if (database !== undefined) execFileSync("psql", [process.env.DATABASE_URL!, "-qc", `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`])
})

it("serves its own routes and mes under /mes", async () => {
  if (env.DATABASE_URL !== "") {
    // a database of its own on the PostgreSQL server
    const name = `embed_node_${Date.now().toString(36)}`
    execFileSync("psql", [env.DATABASE_URL, "-qc", `CREATE DATABASE ${name}`])
    database = name
    const u = new URL(env.DATABASE_URL)
    u.pathname = `/${name}`
    env.DATABASE_URL = u.toString()
    execFileSync(process.execPath, [MES, "migrate", "--json"], { env })
  }
  const { api_key: key } = JSON.parse(execFileSync(process.execPath, [MES, "tenant", "create", "--name", "Embedded", "--json"], { env, encoding: "utf8" }))
  child = spawn(process.execPath, ["server.mjs"], { cwd: here, env, stdio: ["ignore", "pipe", "inherit"] })
  const base = await new Promise<string>((resolve) => {
    let out = ""
    child!.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve(m[1]!)
    })
  })
  expect(await (await fetch(`${base}/hello`)).text()).toBe("hello from my service\n")
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
  const created = await fetch(`${base}/mes/functions/v1/api-jobs`, {
    method: "POST",
    headers,
    body: JSON.stringify({ job_number: "NODE-1", parts: [{ part_number: "P", quantity: 1, operations: [{ operation_name: "Cut", sequence: 1 }] }] })
  })
  expect(created.status).toBe(201)
  const list = (await (await fetch(`${base}/mes/functions/v1/api-jobs`, { headers })).json()) as any
  expect(list.data.jobs.map((j: any) => j.job_number)).toEqual(["NODE-1"])
  expect((await fetch(`${base}/mes/functions/v1/api-jobs`)).status).toBe(401)
  expect((await fetch(`${base}/elsewhere`)).status).toBe(404)
})
