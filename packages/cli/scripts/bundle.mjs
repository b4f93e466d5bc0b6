// The production bundle of the `mes` command (issue 7 item 5): the compiled CLI (dist/main.js, from `tsc -b`) and
// everything it imports, bundled and minified by esbuild into dist/bundle/ with a chunk per lazily loaded part
// (serve, mcp, the docs page, jose, …). A server then holds one small copy of the code it runs instead of the
// sources of ~550 modules with their comments: idle RSS 93 → 78 MB on PostgreSQL, `mes --help` 0.26 → 0.14 s
// (bench/RESULTS.md). PGlite stays external: it loads its WebAssembly and data files next to its own module.
// The migrations are copied to dist/migrations, where adapters-pg's migrator looks for them from the bundle.
// A rebuild keeps the chunks of the build it replaces (their names carry a hash of their content, so none is
// overwritten) and deletes older ones: a server started from that build loads some chunks on first use (jose at the
// first session token, the MCP endpoint, the docs page), and before this a `pnpm build` under a running server left
// those requests failing until its restart. Every file is renamed into place and the entry (main.js) last, so a
// start during a build runs one whole build or the other. MES_BUNDLE_OUT puts the bundle elsewhere (a test's own).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { basename, dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const dist = fileURLToPath(new URL("../dist/", import.meta.url))
const out = process.env.MES_BUNDLE_OUT ?? `${dist}bundle`
const MANIFEST = "build.json"
const ENTRY = "main.js"
mkdirSync(out, { recursive: true })
/** The files of the build in place (all that is there, when an older script made it). */
const previous = existsSync(`${out}/${MANIFEST}`)
  ? JSON.parse(readFileSync(`${out}/${MANIFEST}`, "utf8")).files
  : readdirSync(out)

const { outputFiles } = await build({
  entryPoints: [`${dist}main.js`],
  outdir: out,
  // the chunks' names hash the sources' paths relative to this: fixed, so a build from any directory (pnpm pack's
  // prepack runs in packages/cli) names the same chunks
  absWorkingDir: fileURLToPath(new URL("..", import.meta.url)),
  write: false,
  bundle: true,
  splitting: true,
  minify: process.env.MES_BUNDLE_MINIFY !== "0",
  format: "esm",
  platform: "node",
  target: "node20",
  legalComments: "none",
  logLevel: "warning",
  external: ["@electric-sql/pglite", "@electric-sql/pglite-socket"],
  // CommonJS dependencies (ws) call require(): give the ESM bundle one
  banner: { js: "import{createRequire as __mesRequire}from\"node:module\";const require=__mesRequire(import.meta.url);" }
})
const files = outputFiles.map((f) => basename(f.path))
/** Written beside and renamed into place: a process reading the file sees the old or the new one, never a part. */
const put = (path, contents) => {
  writeFileSync(`${path}.next`, contents)
  renameSync(`${path}.next`, path)
}
// the entry last: until it is in place, a start runs the build being replaced, whose chunks are all still there
for (const f of outputFiles) if (basename(f.path) !== ENTRY) put(f.path, f.contents)
put(`${out}/package.json`, `${JSON.stringify({ type: "module" })}\n`)
put(`${out}/${ENTRY}`, outputFiles.find((f) => basename(f.path) === ENTRY).contents)
const keep = new Set([...files, ...previous, MANIFEST, "package.json"])
for (const f of readdirSync(out)) {
  if (!keep.has(f)) rmSync(`${out}/${f}`, { recursive: true, force: true })
}
put(`${out}/${MANIFEST}`, `${JSON.stringify({ files })}\n`)
// adapters-pg finds its migrations at ../migrations/ from its module: from the bundle's chunks that is dist/migrations
const migrations = `${dirname(out)}/migrations`
rmSync(migrations, { recursive: true, force: true })
cpSync(fileURLToPath(new URL("../../adapters-pg/migrations/", import.meta.url)), migrations, { recursive: true })
