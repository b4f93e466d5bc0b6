// Where a V8 CPU profile's time went (`node --cpu-prof`, `BENCH_CPU_PROF`), per item of work: the shares RESULTS.md
// quotes ("Effect's runtime", "mes's own code", "garbage collection", ...), the functions with the most self time, and
// optionally a timeline or the lines of one function. Profile `packages/cli/dist/main.js serve` (the compiled packages
// unbundled) rather than the bin: in the bundle's chunks the packages cannot be told apart.
//
//   npx tsx bench/profile-summary.ts <file.cpuprofile> [--per N] [--from MS] [--to MS] [--top K]
//                                    [--timeline MS] [--lines <url-part>:<line>]
//
//   --per N        divide every figure by N (requests or deliveries in the window): µs per item; default 1 (ms in all)
//   --from/--to    only the samples in that window, ms from the profile's start (find it with --timeline)
//   --timeline MS  busy and idle ms in each MS of the profile, then stop
//   --lines F:L    self time per source line of the function defined at line L of the file whose URL contains F,
//                  over the whole profile (V8 counts lines per node, not per sample: --from/--to do not apply)
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"

interface CallFrame {
  readonly functionName: string
  readonly url: string
  readonly lineNumber: number
}
interface ProfileNode {
  readonly id: number
  readonly callFrame: CallFrame
  readonly positionTicks?: ReadonlyArray<{ readonly line: number; readonly ticks: number }>
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    per: { type: "string", default: "1" },
    from: { type: "string" },
    to: { type: "string" },
    top: { type: "string", default: "30" },
    timeline: { type: "string" },
    lines: { type: "string" }
  }
})
const file = positionals[0]
if (file === undefined) throw new Error("usage: profile-summary.ts <file.cpuprofile> [--per N] [--from MS] [--to MS] [--top K] [--timeline MS] [--lines F:L]")
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
const per = Number(values.per)
const unit = per === 1 ? "ms" : "µs per item"
// samples in µs; per item: µs; in all: ms
const scaled = (us: number) => (per === 1 ? us / 1000 : us / per).toFixed(per === 1 ? 0 : 1)

const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
// a sample's time is the delta to the next sample (the last one has none); `at`: ms from the profile's start
let clock = 0
const samples = profile.samples.map((id, i) => ({
  node: nodes.get(id)!,
  duration: profile.timeDeltas[i + 1] ?? 0,
  at: (clock += profile.timeDeltas[i]!) / 1000
}))
const isIdle = (n: ProfileNode) => n.callFrame.functionName === "(idle)"
/** A script's URL cut to its last two path segments ("dist/json.js"). */
const shortUrl = (url: string) => url.split("/").slice(-2).join("/")

if (values.timeline !== undefined) {
  const step = Number(values.timeline)
  const rows: Array<{ busy: number; idle: number }> = []
  for (const s of samples) {
    const row = rows[Math.floor(s.at / step)] ??= { busy: 0, idle: 0 }
    if (isIdle(s.node)) row.idle += s.duration
    else row.busy += s.duration
  }
  rows.forEach((r, i) => console.log(`${String(i * step).padStart(7)} ms  busy ${(r.busy / 1000).toFixed(0).padStart(5)}  idle ${(r.idle / 1000).toFixed(0).padStart(5)}`))
  process.exit(0)
}

const from = values.from === undefined ? -Infinity : Number(values.from)
const to = values.to === undefined ? Infinity : Number(values.to)
const inWindow = samples.filter((s) => s.at >= from && s.at <= to)

if (values.lines !== undefined) {
  const colon = values.lines.lastIndexOf(":")
  const [part, line] = [values.lines.slice(0, colon), Number(values.lines.slice(colon + 1))]
  // positionTicks count samples over the whole profile (no window): spread the node's self time over them
  const selfOf = new Map<number, number>()
  for (const s of samples) selfOf.set(s.node.id, (selfOf.get(s.node.id) ?? 0) + s.duration)
  const byLine = new Map<number, number>()
  for (const n of profile.nodes) {
    if (!n.callFrame.url.includes(part) || n.callFrame.lineNumber + 1 !== line) continue
    const ticks = (n.positionTicks ?? []).reduce((sum, t) => sum + t.ticks, 0)
    for (const t of n.positionTicks ?? []) byLine.set(t.line, (byLine.get(t.line) ?? 0) + (selfOf.get(n.id) ?? 0) * t.ticks / ticks)
  }
  for (const [l, us] of [...byLine].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) console.log(`${scaled(us).padStart(9)}  line ${l}`)
  process.exit(0)
}

/** The part of the stack a function belongs to, as RESULTS.md names them. */
const partOf = ({ functionName, url }: CallFrame): string => {
  if (functionName === "(garbage collector)") return "garbage collection"
  if (functionName === "(idle)") return "idle"
  if (functionName === "(program)") return "(program)"
  if (url === "") return `native: ${functionName}`
  const mes = /\/packages\/([^/]+)\//.exec(url)
  if (mes !== null && !url.includes("node_modules")) return `mes: ${mes[1]}`
  if (url.includes("/effect/dist/")) {
    if (/\/effect\/dist\/(internal\/schema\/|Schema)/.test(url)) return "Effect: schema"
    if (url.includes("/effect/dist/http")) return "Effect: HTTP"
    if (url.includes("/effect/dist/sql") || url.includes("/effect/dist/unstable/sql")) return "Effect: SQL"
    return "Effect: runtime"
  }
  if (url.includes("@effect/sql-pg") || url.includes("@effect+sql-pg")) return "@effect/sql-pg (driver)"
  if (url.includes("platform-node")) return "@effect/platform-node"
  if (url.startsWith("node:")) return "Node's own modules"
  return `other: ${shortUrl(url)}`
}

const parts = new Map<string, number>()
const functions = new Map<string, number>()
let busy = 0
let idle = 0
for (const { node, duration } of inWindow) {
  if (isIdle(node)) idle += duration
  else busy += duration
  const part = partOf(node.callFrame)
  parts.set(part, (parts.get(part) ?? 0) + duration)
  const { functionName, url, lineNumber } = node.callFrame
  const name = `${functionName || "(anonymous)"} ${shortUrl(url)}:${lineNumber + 1}`
  functions.set(name, (functions.get(name) ?? 0) + duration)
}

console.log(`busy ${scaled(busy)} ${unit}, idle ${scaled(idle)} (${inWindow.length} samples)`)
console.log("\nby part (share of the busy time):")
const line = (us: number, name: string) => console.log(`${scaled(us).padStart(9)}  ${(100 * us / busy).toFixed(1).padStart(5)} %  ${name}`)
let rest = 0
for (const [part, us] of [...parts].sort((a, b) => b[1] - a[1])) {
  if (part === "idle") continue
  // parts under 0.5 % each are summed into one line
  if (us < busy / 200) rest += us
  else line(us, part)
}
if (rest > 0) line(rest, "the rest (parts under 0.5 % each)")
console.log(`\nself time, top ${values.top}:`)
for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top))) {
  console.log(`${scaled(us).padStart(9)}  ${name}`)
}
