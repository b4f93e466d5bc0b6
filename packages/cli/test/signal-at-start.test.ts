// Ctrl-C while a command opens the embedded database. The database is served to the process's own pool on a private
// socket (adapters-pg `pglite`); a signal that interrupted the pool in the middle of a migration left a connection the
// socket server waited for forever, and the process hung (no output, the data directory locked) until SIGKILL. Here
// `mes migrate` on a fresh data directory gets SIGINT at moments after that socket appears, while the migrations run:
// each process must end by itself, and leave neither the data directory's lock nor the socket's directory behind.
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { scratchDir } from "../../adapters-http/test/scratch.ts"

const BIN = fileURLToPath(new URL("../bin/mes.js", import.meta.url))
const children = new Set<ChildProcess>()
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** `mes migrate` on a fresh data directory, SIGINT `delay` ms after its database's socket appears: how it ended. */
const interrupted = async (delay: number) => {
  const tmp = scratchDir("mes-signal-test-")
  const dataDir = join(tmp, "data")
  const env: NodeJS.ProcessEnv = { ...process.env, MES_DATA_DIR: dataDir, TMPDIR: tmp }
  delete env.DATABASE_URL
  const child = spawn(process.execPath, [BIN, "migrate"], { env, stdio: "ignore" })
  children.add(child)
  const exited = new Promise<string>((resolve) => child.once("exit", (code, signal) => resolve(String(code ?? signal))))
  const socket = () => readdirSync(tmp).some((d) => d.startsWith("mes-pglite-") && existsSync(join(tmp, d, ".s.PGSQL.5432")))
  for (let i = 0; i < 1500 && !socket() && child.exitCode === null; i++) await sleep(10)
  await sleep(delay)
  child.kill("SIGINT")
  const ended = await Promise.race([exited, sleep(15_000).then(() => "still running 15 s after SIGINT")])
  children.delete(child)
  child.kill("SIGKILL")
  const left = [
    ...(existsSync(`${dataDir}.lock`) ? ["the lock"] : []),
    ...readdirSync(tmp).filter((d) => d.startsWith("mes-pglite-"))
  ]
  return { delay, ended, left }
}

// the embedded database only (DATABASE_URL is taken out of the children's environment): run once, in the PGlite pass
describe.skipIf(process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== "")("a signal while the embedded database opens", () => {
  it("ends the process (130, or 0 when it had finished) and leaves no lock or socket directory, wherever it lands", async () => {
    const outcomes = []
    // the pool's first connection and the first migrations come at once with the socket, so most moments are there
    for (const delay of [0, 0, 0, 10, 30, 100]) outcomes.push(await interrupted(delay))
    expect(JSON.stringify(outcomes.filter((o) => !/^(130|0)$/.test(o.ended) || o.left.length > 0))).toBe("[]")
  }, 240_000)
})
