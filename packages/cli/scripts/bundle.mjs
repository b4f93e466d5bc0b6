// The production bundle of the `mes` command (issue 7 item 5): the compiled CLI (dist/main.js, from `tsc -b`) and
// everything it imports, bundled and minified by esbuild into dist/bundle/ with a chunk per lazily loaded part
// (serve, mcp, the docs page, jose, …). A server then holds one small copy of the code it runs instead of the
// sources of ~550 modules with their comments: idle RSS 93 → 78 MB on PostgreSQL, `mes --help` 0.26 → 0.14 s
// (bench/RESULTS.md). PGlite stays external: it loads its WebAssembly and data files next to its own module.
// The migrations are copied to dist/migrations, where adapters-pg's migrator looks for them from the bundle.
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const dist = fileURLToPath(new URL("../dist/", import.meta.url))
const out = `${dist}bundle`
rmSync(out, { recursive: true, force: true })
mkdirSync(out, { recursive: true })

await build({
  entryPoints: [`${dist}main.js`],
  outdir: out,
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
writeFileSync(`${out}/package.json`, `${JSON.stringify({ type: "module" })}\n`)
// adapters-pg finds its migrations at ../migrations/ from its module: from the bundle's chunks that is dist/migrations
rmSync(`${dist}migrations`, { recursive: true, force: true })
cpSync(fileURLToPath(new URL("../../adapters-pg/migrations/", import.meta.url)), `${dist}migrations`, { recursive: true })
