// The compiled `mes` as a child process for the one-off benches (export-memory, bulk-sync).
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

export const MES_BIN = fileURLToPath(new URL("../../packages/cli/bin/mes.js", import.meta.url))

/** Runs SQL through psql against `url` (stops at the first error; unaligned, tuples only). */
export const psql = (url: string, args: ReadonlyArray<string>) =>
  execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-qAt", ...args], { encoding: "utf8" })

/** The URL of database `name` on the server of the `admin` URL. */
export const databaseUrl = (admin: string, name: string) => {
  const u = new URL(admin)
  u.pathname = `/${name}`
  return u.toString()
}

/** Runs a `mes` command with `--json` and parses what it prints. */
export const mesJson = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  JSON.parse(execFileSync(process.execPath, [MES_BIN, ...args, "--json"], { env, encoding: "utf8" }))

/**
 * Creates a tenant in the database of `url` (`tenant create` migrates it first if it must); answers the environment
 * that points `mes` at it and the tenant (`api_key`, `tenant_id`).
 */
export const tenantIn = (url: string, tenantArgs: ReadonlyArray<string>) => {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: url, MES_MONTHLY_RESET: "off" }
  return { env, tenant: mesJson(["tenant", "create", ...tenantArgs], env) }
}

/** Creates database `name` on the server of `admin` with a tenant in it (`tenantIn`). */
export const tenantDatabase = (admin: string, name: string, tenantArgs: ReadonlyArray<string>) => {
  psql(admin, ["-c", `CREATE DATABASE ${name}`])
  return tenantIn(databaseUrl(admin, name), tenantArgs)
}

/**
 * Starts `mes serve` on a free port; resolves with the process and its base URL once it listens.
 * `BENCH_NODE_FLAGS` (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) go to the server's node.
 */
export const startMes = async (env: NodeJS.ProcessEnv): Promise<{ server: ChildProcess; url: string; stop: () => Promise<void> }> => {
  const flags = (process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "")
  const server = spawn(process.execPath, [...flags, MES_BIN, "serve", "--port", "0", "--host", "127.0.0.1"], { env, stdio: ["ignore", "pipe", "inherit"] })
  const url = await new Promise<string>((resolve) => {
    let out = ""
    server.stdout!.setEncoding("utf8").on("data", (d: string) => {
      out += d
      const m = /mes listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve(m[1]!)
    })
  })
  const stop = async () => {
    server.kill("SIGTERM")
    await new Promise((r) => server.once("exit", r))
  }
  return { server, url, stop }
}
