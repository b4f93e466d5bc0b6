import * as Effect from "effect/Effect"
import { type CurrentTenant, type DomainError, type Page, requireId, type SyncResult } from "@mes/domain"
import { type ApiReply, type Handlers, ok } from "../server.ts"

/** `data.<plural>` with `data.pagination` (spec 4.0, DECISIONS). */
export const listReply = (plural: string) => (page: Page<unknown>) =>
  ok({ [plural]: page.rows, pagination: { limit: page.limit, offset: page.offset, total: page.total } })

/** Sync answers 201 when the record was created and 200 when updated (spec 4.1 PUT sync). */
export const syncReply = (r: SyncResult) => ok(r, r.action === "created" ? 201 : 200)

type Use<A> = Effect.Effect<A, DomainError, CurrentTenant>

/** The use cases every resource has; lists may carry less (or more) than a read of one (`L`). */
export interface Resource<T, L = T> {
  readonly list: (query: Readonly<Record<string, string>>) => Use<Page<L>>
  /** One record as the API shows it (JSON built by the database). */
  readonly get: (id: string) => Use<unknown>
  readonly create: (input: unknown) => Use<T>
  readonly update: (id: string, input: unknown) => Use<unknown>
  readonly remove: (id: string) => Use<void>
}

/**
 * GET (`?id=` reads one, else lists), POST (201), PATCH `?id=`, DELETE `?id=` for one resource, in the
 * envelopes of DECISIONS: `data.<singular>`, `data.<plural>` + pagination, `data: {id, deleted: true}`.
 */
export const resourceHandlers = <T, L = T>(
  group: string,
  names: { readonly singular: string; readonly plural: string },
  resource: Resource<T, L>,
  createdReply: (record: T) => ApiReply = (record) => ok({ [names.singular]: record }, 201)
): Handlers<never> => ({
  [`${group}.list`]: ({ query }) =>
    query.id !== undefined
      ? requireId(query).pipe(Effect.flatMap(resource.get), Effect.map((r) => ok({ [names.singular]: r })))
      : resource.list(query).pipe(Effect.map(listReply(names.plural))),
  [`${group}.create`]: ({ body }) => resource.create(body).pipe(Effect.map(createdReply)),
  [`${group}.update`]: ({ query, body }) =>
    requireId(query).pipe(Effect.flatMap((id) => resource.update(id, body)), Effect.map((r) => ok({ [names.singular]: r }))),
  [`${group}.remove`]: ({ query }) =>
    requireId(query).pipe(Effect.flatMap((id) => resource.remove(id).pipe(Effect.as(ok({ id, deleted: true })))))
})

/** PUT `<path>/sync` and POST `<path>/bulk-sync`. */
export const syncHandlers = (
  group: string,
  one: (input: unknown) => Use<SyncResult>,
  bulk: (body: unknown) => Use<unknown>
): Handlers<never> => ({
  [`${group}.sync`]: ({ body }) => one(body).pipe(Effect.map(syncReply)),
  [`${group}.bulkSync`]: ({ body }) => bulk(body).pipe(Effect.map((r) => ok(r)))
})
