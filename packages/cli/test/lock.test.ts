// The embedded database's lock file (src/lock.ts) under processes that start together: each child process loads
// the built lock.ts (`pnpm test` builds first), waits for the same moment, tries to take the lock, and says what it
// got; a winner holds the lock until every other child has answered. Exactly one may win, with no lock before
// and with a stale one (a dead process's) before, and the lock and its helper files are gone afterwards.
import { spawn } from "node:child_process"
import { existsSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { scratchDir } from "../../adapters-http/test/scratch.ts"

const LOCK_JS = new URL("../dist/lock.js", import.meta.url).href

// argv: lock path, go file. Ready once loaded; at the moment the go file names (all children spin until then, so
// that they run into the lock at once), takes the lock; a winner holds it until a line arrives on stdin.
const CHILD = `
const { acquireLock, releaseLock, LockHeld } = await import(${JSON.stringify(LOCK_JS)})
const { existsSync, readFileSync } = await import("node:fs")
const [path, go] = process.argv.slice(1)
console.log("ready")
const nap = new Int32Array(new SharedArrayBuffer(4))
while (!existsSync(go)) Atomics.wait(nap, 0, 0, 1)
const at = Number(readFileSync(go, "utf8"))
while (Date.now() < at);
try {
  const text = acquireLock(path)
  console.log("won")
  process.stdin.once("data", () => {
    releaseLock(path, text)
    process.exit(0)
  })
} catch (e) {
  console.log(e instanceof LockHeld ? "held " + e.pid : "error " + e.message)
  process.exit(0)
}
`

interface Child {
  readonly pid: number
  readonly said: Promise<string>
  readonly release: () => void
  readonly exited: Promise<void>
}

const child = (path: string, go: string, ready: () => void): Child => {
  const c = spawn(process.execPath, ["--input-type=module", "-e", CHILD, path, go], { stdio: ["pipe", "pipe", "inherit"] })
  c.stdin.on("error", () => {}) // a child that has answered and exited
  let out = ""
  let readied = false
  const once = () => readied || ((readied = true), ready())
  let answer: (line: string) => void = () => {}
  const said = new Promise<string>((resolve) => (answer = resolve))
  c.stdout.on("data", (d: Buffer) => {
    const before = out.split("\n").length
    out += d.toString()
    const lines = out.split("\n") // complete lines, then what follows the last newline
    if (before <= 1 && lines.length > 1) once()
    if (lines.length > 2) answer(lines[1]!)
  })
  const exited = new Promise<void>((resolve) => c.on("exit", () => resolve()))
  void exited.then(() => {
    once() // one that failed to load counts as ready, and answers what it printed
    answer(`exited having said: ${out.trim()}`)
  })
  return { pid: c.pid!, said, release: () => c.stdin.end("release\n"), exited }
}

/** N children run into the lock at `path` at once; what each said, in order, and then the winners are released. */
const contend = async (path: string, n: number) => {
  const dir = scratchDir("mes-lock-go-")
  const go = join(dir, "go")
  let readyCount = 0
  let allReady: () => void = () => {}
  const ready = new Promise<void>((resolve) => (allReady = resolve))
  const children = Array.from({ length: n }, () =>
    child(path, go, () => {
      if (++readyCount === n) allReady()
    }))
  await ready
  writeFileSync(go, String(Date.now() + 100))
  const said = await Promise.all(children.map((c) => c.said))
  for (const c of children) c.release()
  await Promise.all(children.map((c) => c.exited))
  return { said, pids: children.map((c) => c.pid) }
}

/** A pid no process has now: one of a child that has exited. */
const deadPid = async () => {
  const c = spawn(process.execPath, ["-e", "0"])
  await new Promise((resolve) => c.on("exit", resolve))
  return c.pid!
}

const N = 8

describe("the embedded database's lock, taken by processes that start together", () => {
  it("with no lock before, and with a dead process's stale lock before: exactly one wins, each other is told its pid", async () => {
    const dir = scratchDir("mes-lock-")
    const path = join(dir, "data.lock")
    // rounds go through: no lock; a stale one; a stale one and the takeover file of a process killed while it held it
    // (which no process would take over). Removing a stale lock by name let two processes through in most runs.
    for (let round = 0; round < 6; round++) {
      if (round % 3 >= 1) writeFileSync(path, `${await deadPid()} 1`)
      if (round % 3 === 2) writeFileSync(`${path}.takeover`, `${await deadPid()} 1`)
      const { said, pids } = await contend(path, N)
      const winners = pids.filter((_, i) => said[i] === "won")
      expect({ round, winners: winners.length }).toEqual({ round, winners: 1 })
      expect(said.filter((s) => s !== "won")).toEqual(Array(N - 1).fill(`held ${winners[0]}`))
      // released by its holder; no process's own file or moved-aside lock is left beside it
      expect(existsSync(path)).toBe(false)
      expect(readdirSync(dir)).toEqual([])
    }
  })
})
