// `mes mcp`: the MCP tool server on stdio (spec 4.14, DECISIONS). With --backend-url it calls the REST API of a
// running server; without, the same routes answer in process on the database of the environment. The API key
// (--api-key or MES_API_KEY) chooses the tenant either way.
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Command, Flag } from "effect/cli"
import { type Toolset, TOOLSETS } from "@mes/adapters-mcp/toolsets"
import { reportErrors, userError } from "../output.ts"

export const mcp = Command.make("mcp", {
  backendUrl: Flag.String("backend-url").pipe(Flag.withDescription("REST API to call, e.g. http://127.0.0.1:8787/functions/v1 (default: in process on the database)"), Flag.optional),
  apiKey: Flag.String("api-key").pipe(Flag.withDescription("API key of the tenant (default: MES_API_KEY)"), Flag.optional),
  readOnly: Flag.Boolean("read-only").pipe(Flag.withDescription("Expose only the tools that change nothing"), Flag.withDefault(false)),
  toolsets: Flag.String("toolsets").pipe(Flag.withDescription(`Expose only these toolsets: ${TOOLSETS.join(",")}`), Flag.optional)
}, ({ apiKey, backendUrl, readOnly, toolsets }) =>
  Effect.gen(function*() {
    const envKey = yield* Config.String("MES_API_KEY").pipe(Config.option)
    const key = Option.orElse(apiKey, () => Option.filter(envKey, (k) => k.trim() !== ""))
    if (Option.isNone(key)) return yield* userError("mes mcp needs an API key: --api-key or MES_API_KEY (create one with `mes tenant create` or `mes key create`)")
    const sets = Option.map(toolsets, (s) => s.split(",").map((t) => t.trim()).filter((t) => t !== ""))
    if (Option.isSome(sets)) {
      const unknown = sets.value.filter((t) => !(TOOLSETS as ReadonlyArray<string>).includes(t))
      if (unknown.length > 0) return yield* userError(`unknown toolset ${unknown.join(", ")}; toolsets: ${TOOLSETS.join(", ")}`)
      // an empty list served no tool at all, without a word
      if (sets.value.length === 0) return yield* userError(`--toolsets names none: give one or more of ${TOOLSETS.join(", ")}, or leave it out for all`)
    }
    // a URL that is not one failed every tool call ("BACKEND_UNAVAILABLE: Failed to parse URL"), not the start
    if (Option.isSome(backendUrl) && !(URL.canParse(backendUrl.value) && /^https?:$/.test(new URL(backendUrl.value).protocol))) {
      return yield* userError(`--backend-url must be the http(s) URL of a running mes, e.g. http://127.0.0.1:8787/functions/v1, got '${backendUrl.value}'`)
    }
    const live = yield* Effect.promise(() => import("../mcp-live.ts"))
    yield* live.runMcp({
      apiKey: key.value,
      backendUrl: Option.getOrUndefined(backendUrl),
      options: { readOnly, ...(Option.isSome(sets) ? { toolsets: sets.value as Array<Toolset> } : {}) }
    })
  }).pipe(reportErrors)).pipe(Command.withDescription("Run the MCP tool server for assistants on stdio"), Command.withExamples([{ command: "MES_API_KEY=svc_live_… mes mcp", description: "on the database, as the key's tenant" }, { command: "mes mcp --backend-url http://127.0.0.1:8787/functions/v1 --api-key svc_live_… --read-only", description: "against a running mes, reads only" }]))
