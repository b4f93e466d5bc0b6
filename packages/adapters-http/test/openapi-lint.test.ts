// The OpenAPI document the server serves passes `redocly lint` with the recommended rules (issue 13 item 4):
// a summary and description on every operation, tags with descriptions, servers, security schemes, the error
// envelope on every error response, request examples that match their schemas.
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Harness, startServer } from "./harness.ts"
import { scratchDir } from "./scratch.ts"

const REDOCLY = fileURLToPath(new URL("../node_modules/.bin/redocly", import.meta.url))
/** Warnings we accept, each with its reason. */
const ACCEPTED_WARNINGS: Readonly<Record<string, string>> = {
  // the project has not chosen a license yet; the document does not invent one
  "info-license": "no license chosen"
}

let h: Harness
let spec: Record<string, any>
beforeAll(async () => {
  h = await startServer()
  spec = await (await fetch(`${h.url}/openapi.json`)).json() as Record<string, any>
})
afterAll(() => h.close())

const lint = (file: string) =>
  new Promise<{ problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }> }>((resolve, reject) =>
    execFile(REDOCLY, ["lint", file, "--extends=recommended", "--format=json", "--max-problems=1000"], {
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024
    }, (error, stdout) => {
      // lint exits 1 when it finds errors; the JSON report is on stdout either way
      try {
        resolve(JSON.parse(stdout))
      } catch {
        reject(error ?? new Error(`redocly printed no report: ${stdout.slice(0, 500)}`))
      }
    }))

describe("the OpenAPI document", () => {
  it("passes redocly lint (recommended): no errors, no warnings but the accepted ones", async () => {
    const file = join(scratchDir("mes-openapi-"), "openapi.json")
    writeFileSync(file, JSON.stringify(spec))
    const { problems } = await lint(file)
    const describe = (p: (typeof problems)[number]) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`
    expect(problems.filter((p) => p.severity === "error").map(describe)).toEqual([])
    expect(problems.filter((p) => p.severity !== "error" && ACCEPTED_WARNINGS[p.ruleId] === undefined).map(describe)).toEqual([])
  }, 180_000)

  it("says how every operation authenticates, and documents every error response with the envelope", () => {
    expect(Object.keys(spec.components.securitySchemes).sort()).toEqual(["apiKey", "apiKeyHeader", "cronSecret", "serviceKey", "sessionToken"])
    const ops = Object.entries(spec.paths as Record<string, Record<string, any>>)
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))
    expect(ops.length).toBeGreaterThan(100)
    const API_ERRORS = ["400", "401", "403", "404", "409", "422", "429", "503"]
    for (const { path, method, op } of ops) {
      const id = op.operationId
      expect(op.summary, id).toEqual(expect.any(String))
      expect(op.description, id).toEqual(expect.any(String))
      // the bare fallback of contract/openapi.ts `describe`: the endpoint needs an entry in its SUMMARIES
      expect(op.description, `${id}: add a summary and description to SUMMARIES in contract/openapi.ts`).not.toBe(`${method.toUpperCase()} ${path}`)
      expect(op.summary, id).not.toMatch(/ a [aeiou]/i)
      expect(op.security?.length, id).toBeGreaterThan(0)
      const statuses = Object.keys(op.responses)
      expect(statuses, id).toEqual(expect.arrayContaining(id === "monthlyReset.run" ? ["400", "401", "500"] : API_ERRORS))
      if (method === "patch") expect(statuses, id).toContain("412")
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        if (Number(status) < 400) continue
        // the error envelope, and what the status means
        const schema = response.content?.["application/json"]?.schema
        const envelope = schema?.$ref === undefined ? schema : spec.components.schemas[schema.$ref.replace("#/components/schemas/", "")]
        expect(envelope?.properties?.success, `${id} ${status}`).toEqual({ type: "boolean", enum: [false] })
        expect(envelope?.properties?.error?.required, `${id} ${status}`).toEqual(expect.arrayContaining(["code", "message"]))
        expect(response.description, `${id} ${status}`).toMatch(/^[A-Z_]+( or [A-Z_]+)?: /)
        if (status === "429" || status === "503") expect(response.headers?.["Retry-After"], `${id} ${status}`).toBeDefined()
      }
    }
    expect(spec.paths["/functions/v1/api-export"].get.security).toEqual([{ sessionToken: [] }])
    expect(spec.paths["/functions/v1/monthly-reset-cron"].post.security).toEqual([{ cronSecret: [] }, { serviceKey: [] }])
    expect(spec.paths["/functions/v1/api-jobs"].post.requestBody.content["application/json"].example.job_number).toBe("J-1001")
    expect(spec.paths["/functions/v1/api-resources"].post.summary).toBe("Create a resource")
    expect(spec.paths["/functions/v1/api-key-generate"].post.summary).toBe("Create an API key")
    expect(spec.servers.map((s: { url: string }) => s.url)).toEqual(["/"])
    expect(spec.tags.every((t: any) => typeof t.description === "string" && t.description.length > 0)).toBe(true)
  })

  it("describes integer query parameters as the server takes them: type integer with the schema's bounds, not numeric text", () => {
    const query = (path: string) =>
      Object.fromEntries((spec.paths[`/functions/v1/${path}`].get.parameters as Array<any>).filter((p) => p.in === "query").map((p) => [p.name, p.schema]))
    const INT4 = 2147483647
    for (const path of ["api-jobs", "api-operations", "api-parts", "api-key-generate"]) {
      expect(query(path).limit, path).toEqual({ type: "integer", minimum: 1, maximum: 1000 })
      expect(query(path).offset, path).toEqual({ type: "integer", minimum: 0, maximum: INT4 })
    }
    // integer filters: the server refuses values outside the 32-bit integers (422) and anything but -?digits (400)
    expect(query("api-jobs").priority).toEqual({ type: "integer", minimum: -INT4 - 1, maximum: INT4 })
    expect(query("api-parts").quantity).toEqual({ type: "integer", minimum: -INT4 - 1, maximum: INT4 })
    expect(query("api-erp-sync/changes").limit).toEqual({ type: "integer", minimum: 1, maximum: 1000 })
    // the generator's text encoding of a number, a pattern that lets "+5", "5.0" and "1e2" through (the server 400s them)
    const numericText = Object.values(spec.paths as Record<string, Record<string, any>>).flatMap((item) =>
      Object.values(item).flatMap((op) =>
        ((op.parameters ?? []) as Array<any>).filter((p) => JSON.stringify(p.schema).includes("[Ee][+-]?")).map((p) => `${op.operationId} ${p.name}`)
      )
    )
    expect(numericText).toEqual([])
  })

  it("gives text lengths in characters, as JSON Schema counts them and the server does: minLength 16 for a secret, not 8 UTF-16 pairs", () => {
    const body = (path: string) => spec.paths[`/functions/v1/${path}`].post.requestBody.content["application/json"].schema.properties
    expect(body("api-jobs").job_number).toEqual({ type: "string", minLength: 1, maxLength: 255 })
    expect(body("api-webhooks").secret).toEqual({ type: "string", minLength: 16, maxLength: 256 })
  })

  it("the server keeps the integer query parameters' documented bounds: each bound 200, one past it 422, numeric text 400", async () => {
    const rest = (await h.as("OpenAPI bounds")).api
    const parameters = spec.paths["/functions/v1/api-jobs"].get.parameters as Array<{ name: string; schema: { minimum: number; maximum: number } }>
    for (const name of ["limit", "offset", "priority"]) {
      const { minimum, maximum } = parameters.find((p) => p.name === name)!.schema
      const status = async (v: string | number) => [name, v, (await rest.get(`/api-jobs?${name}=${encodeURIComponent(v)}`)).status]
      for (const v of [minimum, maximum]) expect(await status(v)).toEqual([name, v, 200])
      for (const v of [minimum - 1, maximum + 1]) expect(await status(v)).toEqual([name, v, 422])
      for (const v of ["+5", "5.0", "1e2", "5.5", "abc"]) expect(await status(v)).toEqual([name, v, 400])
    }
  })

  it("the docs page embeds the same document and loads nothing from a CDN", async () => {
    const html = await (await fetch(`${h.url}/docs`)).text()
    expect(html).toContain("Create a job with its parts and operations")
    expect(html).not.toMatch(/<script[^>]+src="https?:\/\//)
    expect(html).not.toMatch(/<link[^>]+href="https?:\/\//)
    // Scalar's default fonts come from fonts.scalar.com, and a proxy would send "try it" requests elsewhere
    expect(html).toContain(`"withDefaultFonts":false`)
    expect(html).not.toMatch(/proxyUrl\s*["']?\s*:\s*["']https?:/)
  })
})
