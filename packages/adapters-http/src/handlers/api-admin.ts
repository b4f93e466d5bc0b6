// The monthly reset task, the admin export and API-key management (issue 10).
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { HttpServerResponse } from "effect/http"
import { stringify } from "csv-stringify/sync"
import { Changes, Export, Sync, type ExportEntity, type ExportPlan, type ExportReader, MonthlyReset, requireId, Tenants } from "@mes/domain"
import { type Handlers, ok, raw } from "../server.ts"
import { listReply } from "./shared.ts"

/** spec 4.13's failure envelope: the reset as a whole could not run. */
const resetFailed = (message: string) =>
  raw(HttpServerResponse.jsonUnsafe(
    { success: false, error: { code: "INTERNAL_ERROR", message, timestamp: new Date().toISOString(), statusCode: 500 } },
    { status: 500 }
  ))

/** `{"success":true,"data":{"<entity>":[...],...}}`, written page by page as PostgreSQL builds the records. */
const jsonBody = (entities: ReadonlyArray<ExportEntity>, reader: ExportReader) =>
  Stream.concat(
    Stream.make(`{"success":true,"data":{`),
    Stream.fromIterable(entities.map((entity, i) => ({ entity, i }))).pipe(
      Stream.flatMap(({ entity, i }): Stream.Stream<string> =>
        Stream.make(`${i === 0 ? "" : ","}"${entity}":[`).pipe(
          Stream.concat(reader.pages(entity).pipe(Stream.intersperse(","))),
          Stream.concat(Stream.make("]"))
        )
      ),
      Stream.concat(Stream.make("}}"))
    )
  )

// RFC 4180 with a header row; nested values (metadata, id lists) are their JSON, booleans true/false, null empty
// (a field with a bare line feed is quoted too: csv-stringify only quotes the record delimiter by default)
const CSV_OPTIONS = {
  cast: { boolean: (v: boolean) => String(v), object: (v: object) => JSON.stringify(v) },
  record_delimiter: "windows",
  quoted_match: /[\r\n]/
} as const

const csvBody = (entity: ExportEntity, reader: ExportReader) =>
  Stream.unwrap(Effect.map(reader.columns(entity), (columns) =>
    Stream.concat(
      Stream.make(stringify([columns], CSV_OPTIONS)),
      reader.pages(entity).pipe(Stream.map((page) =>
        stringify(JSON.parse(`[${page}]`) as Array<Record<string, unknown>>, { ...CSV_OPTIONS, columns: [...columns] })
      ))
    )))

const exportResponse = (plan: ExportPlan) => {
  const body = Stream.unwrap(Effect.map(plan.open, (reader): Stream.Stream<string> =>
    plan.format === "csv" ? csvBody(plan.entities[0]!, reader) : jsonBody(plan.entities, reader)
  )).pipe(Stream.encodeText)
  const day = new Date().toISOString().slice(0, 10)
  return plan.format === "csv"
    ? HttpServerResponse.stream(body, {
      contentType: "text/csv; charset=utf-8",
      headers: { "content-disposition": `attachment; filename="mes-export-${plan.entities[0]}-${day}.csv"` }
    })
    : HttpServerResponse.stream(body, { contentType: "application/json" })
}

export const adminHandlers = Effect.gen(function*() {
  const reset = yield* MonthlyReset
  const exporter = yield* Export
  const tenants = yield* Tenants
  const changes = yield* Changes
  const sync = yield* Sync
  return {
    "erpSync.sync": ({ body }) => sync.erp(body, { dryRun: false }).pipe(Effect.map((report) => ok(report))),
    "erpSync.diff": ({ body }) => sync.erp(body, { dryRun: true }).pipe(Effect.map((report) => ok(report))),
    "erpSync.status": () => Effect.map(sync.status, (status) => ok(status)),
    "erpSync.changes": ({ query }) => changes.feed(query).pipe(Effect.map((page) => ok(page))),
    "monthlyReset.run": () =>
      reset.run("http").pipe(
        Effect.map((report) => ok(report)),
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("monthly reset failed", cause).pipe(Effect.as(resetFailed("Monthly reset failed; no tenant was reset")))
        )
      ),
    "export.run": ({ query }) => exporter.open(query).pipe(Effect.map((plan) => raw(exportResponse(plan)))),
    "apiKeys.create": ({ body }) => tenants.generateKey(body).pipe(Effect.map((k) => ok(k, 201))),
    "apiKeys.list": ({ query }) => tenants.listKeys(query).pipe(Effect.map(listReply("api_keys"))),
    "apiKeys.remove": ({ query }) =>
      requireId(query).pipe(Effect.flatMap(tenants.revokeKey), Effect.map((key) => ok({ api_key: key })))
  } satisfies Handlers<never>
})
