// The server under test (bench/server.ts) in its own process: spawning it, its stdin commands, stopping it, and
// direct HTTP requests to it. Every run gets a fresh server (and, on postgres, a fresh database): withFreshServer.
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { createDatabase, type Database, dropDatabase, serverDbArgs } from "./database.ts"
import type { DbKind } from "./options.ts"
import { benchDir, log, root, sleep, withTimeout } from "./util.ts"

export interface Server {
  readonly child: ChildProcess
  readonly url: string
  readonly key: string
  readonly tenant: string
  readonly command: (cmd: string) => Promise<Record<string, unknown>>
  readonly stop: () => Promise<void>
  readonly stderrTail: () => string
}

const live = new Set<ChildProcess>()
/** SIGKILLs every server process still running (watchdog, Ctrl-C, a failed run). */
export const killAll = () => {
  for (const child of live) if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, "SIGKILL")
}

const startServer = async (db: DbKind, database: Database | undefined, extraEnv: Record<string, string>): Promise<Server> => {
  // without the development condition the packages resolve to their compiled dist (as in production)
  // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops (node --cpu-prof)
  // BENCH_NODE_FLAGS="--a --b": flags for the server's node, before anything else
  const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
  const args = [...profile, ...(process.env.BENCH_NODE_FLAGS ?? "").split(" ").filter(Boolean), "--import", "tsx", join(benchDir, "server.ts"), "--db", db, ...serverDbArgs(db, database)]
  // process.execPath is the node binary itself, so child.pid is the server (no npx/tsx wrapper in between)
  const child = spawn(process.execPath, args, {
    cwd: root,
    // the dispatcher's settings come only from the runner (webhook scenarios), never from the caller's shell
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("MES_WEBHOOK_"))),
      MES_LOG_REQUESTS: "false",
      ...extraEnv
    },
    stdio: ["pipe", "pipe", "pipe"]
  })
  live.add(child)
  child.on("exit", () => live.delete(child))
  let stderr = ""
  child.stderr!.on("data", (d) => {
    stderr = (stderr + String(d)).slice(-4000)
    if (process.env.BENCH_TEE) process.stderr.write(d)
  })
  const waiting: Array<(msg: Record<string, unknown>) => void> = []
  let onReady: ((msg: Record<string, unknown>) => void) | undefined
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (!line.startsWith("{")) return // Effect's own log lines ("Listening on …")
    const msg = JSON.parse(line) as Record<string, unknown>
    if (msg.ready === true) onReady?.(msg)
    else waiting.shift()?.(msg)
  })
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
  const ready = await withTimeout(
    "server start",
    120_000,
    Promise.race([
      new Promise<Record<string, unknown>>((r) => (onReady = r)),
      exited.then((code) => {
        throw new Error(`server exited with ${code} before ready:\n${stderr}`)
      })
    ])
  )
  const command = (cmd: string) =>
    withTimeout(`server command ${cmd}`, 120_000, new Promise<Record<string, unknown>>((r) => {
      waiting.push(r)
      child.stdin!.write(cmd + "\n")
    })).then((msg) => {
      if (msg.error !== undefined) throw new Error(`server command ${cmd} failed: ${String(msg.error)}`)
      return msg
    })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.stdin!.end("quit\n")
    const code = await Promise.race([exited, sleep(10_000).then(() => "timeout" as const)])
    if (code === "timeout" && child.pid !== undefined) {
      log(`server pid ${child.pid} did not exit after quit; SIGKILL`)
      process.kill(child.pid, "SIGKILL")
      await withTimeout("server kill", 10_000, exited)
    }
  }
  return { child, url: String(ready.url), key: String(ready.key), tenant: String(ready.tenant), command, stop, stderrTail: () => stderr }
}

/** What a run gets from withFreshServer. */
export interface Fresh {
  readonly server: Server
  /** performance.now() before the database was created: setupMs.start runs from here */
  readonly t0: number
  /** a clean-up to run after the server has stopped, before the database is dropped */
  readonly afterStop: (what: string, f: () => Promise<void>) => void
}
/**
 * Runs `body` against a fresh server process over a fresh database (postgres) or PGlite. Afterwards, even on
 * failure, it stops the server (quit, then SIGKILL) and drops the database; on failure it logs the server's stderr.
 */
export const withFreshServer = async <A>(db: DbKind, env: Record<string, string>, body: (fresh: Fresh) => Promise<A>): Promise<A> => {
  let database: Database | undefined
  let server: Server | undefined
  const cleanups: Array<{ what: string; f: () => Promise<void> }> = []
  try {
    const t0 = performance.now()
    if (db === "postgres") database = await createDatabase()
    server = await startServer(db, database, env)
    return await body({ server, t0, afterStop: (what, f) => cleanups.push({ what, f }) })
  } catch (e) {
    if (server !== undefined) log(`server stderr (tail):\n${server.stderrTail()}`)
    throw e
  } finally {
    if (server !== undefined) await server.stop().catch((e) => log(`stop failed: ${String(e)}`))
    for (const c of cleanups) await c.f().catch((e) => log(`${c.what} failed: ${String(e)}`))
    if (database !== undefined) await dropDatabase(database.name).catch((e) => log(`drop ${database!.name} failed: ${String(e)}`))
  }
}

/** One request straight to the server (seeding, checks by hand, the webhook-lag producer). */
export const http = async (server: Server, method: string, path: string, body?: unknown) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { "content-type": "application/json", authorization: `Bearer ${server.key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000)
  })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) as any }
}
