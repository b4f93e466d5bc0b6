// One table from constraint name to domain error (ARCHITECTURE: errors). Every other SqlError is a defect.
import * as Effect from "effect/Effect"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import { Conflict, detail, operationSequenceExhausted, validationFailed, type ValidationFailed } from "@mes/domain"

/**
 * What refuses an operation's delete (a row that references it without ON DELETE CASCADE), by constraint. A part's
 * delete meets the same refusals through its operations (operations_part_fkey cascades), and says so.
 */
const operationDependants: Record<string, string> = {
  time_entries_operation_fkey: "has time entries",
  batch_operations_operation_fkey: "belongs to a batch",
  issues_operation_fkey: "has issues",
  operation_quantities_operation_fkey: "has recorded quantities"
}
/** The refusals of an operation's delete, each worded by `message`. */
const operationRefusals = (message: (fact: string) => string) =>
  Object.fromEntries(Object.entries(operationDependants).map(([name, fact]) => [name, { message: message(fact) }]))

const conflicts: Record<string, { readonly message: string; readonly field?: string }> = {
  ...operationRefusals((fact) => `operation ${fact} and cannot be deleted`),
  jobs_tenant_job_number_key: { message: "job_number already exists", field: "job_number" },
  jobs_tenant_external_key: { message: "a job with this external_source and external_id already exists", field: "external_id" },
  parts_job_part_number_key: { message: "part_number already exists in this job", field: "part_number" },
  parts_tenant_external_key: { message: "a part with this external_source and external_id already exists", field: "external_id" },
  parts_parent_part_fkey: { message: "part has child parts; delete or re-parent them first" },
  operations_part_sequence_key: { message: "sequence already exists in this part", field: "sequence" },
  operations_tenant_external_key: { message: "an operation with this external_source and external_id already exists", field: "external_id" },
  cells_tenant_name_key: { message: "a cell with this name already exists", field: "name" },
  cells_tenant_external_key: { message: "a cell with this external_source and external_id already exists", field: "external_id" },
  profiles_tenant_email_key: { message: "a profile with this email already exists", field: "email" },
  operations_cell_fkey: { message: "cell is used by operations and cannot be deleted" },
  jobs_current_cell_fkey: { message: "cell is the current cell of jobs and cannot be deleted" },
  parts_current_cell_fkey: { message: "cell is the current cell of parts and cannot be deleted" },
  operations_assigned_operator_fkey: { message: "profile is assigned to operations and cannot be deleted" },
  time_entries_user_fkey: { message: "profile has time entries and cannot be deleted" },
  time_entries_open_key: { message: "this operator already has an open time entry on the operation", field: "user_id" },
  batches_tenant_batch_number_key: { message: "batch_number already exists", field: "batch_number" },
  batch_operations_operation_key: { message: "an operation is already in another batch", field: "operation_ids" },
  batch_operations_pkey: { message: "an operation is already in this batch", field: "operation_ids" },
  batches_cell_fkey: { message: "cell is used by batches and cannot be deleted" },
  batches_parent_fkey: { message: "batch has child batches and cannot be deleted" },
  batches_operator_fkey: { message: "profile operates batches and cannot be deleted" },
  time_entries_batch_fkey: { message: "batch has time entries and cannot be deleted" },
  issues_tenant_ncr_number_key: { message: "ncr_number already exists", field: "ncr_number" },
  issues_reported_by_fkey: { message: "profile is referenced by issues and cannot be deleted" },
  issues_assigned_to_fkey: { message: "profile is referenced by issues and cannot be deleted" },
  issues_resolved_by_fkey: { message: "profile is referenced by issues and cannot be deleted" },
  issues_verified_by_fkey: { message: "profile is referenced by issues and cannot be deleted" },
  resources_tenant_external_key: { message: "a resource with this external_source and external_id already exists", field: "external_id" },
  materials_tenant_name_key: { message: "a material with this name already exists", field: "name" },
  parts_material_fkey: { message: "material is used by parts and cannot be deleted" },
  scrap_reasons_tenant_code_key: { message: "a scrap reason with this code already exists", field: "code" },
  operation_quantities_scrap_reason_fkey: { message: "scrap reason is used by recorded quantities; deactivate it instead (active: false)" },
  operation_quantities_user_fkey: { message: "profile has recorded quantities and cannot be deleted" },
  assignments_user_fkey: { message: "profile has assignments and cannot be deleted" },
  assignments_assigned_by_fkey: { message: "profile made assignments and cannot be deleted" },
  downtime_cell_fkey: { message: "cell has recorded downtime and cannot be deleted" },
  substep_templates_tenant_name_key: { message: "a template with this name already exists", field: "name" },
  substep_template_items_sequence_key: { message: "sequence already exists in this template", field: "sequence" },
  part_images_storage_key_key: { message: "this upload is attached to a part already", field: "storage_key" },
  // raised by an operation create without sequence on a part whose operations use the largest one (migration 0029)
  operations_sequence_exhausted: operationSequenceExhausted,
  // raised when a parent change would close a loop that the write's own check could not see: another parent change
  // of the tenant committed while it ran (migration 0035); retried, the request is answered 422 CIRCULAR_REFERENCE
  batches_parent_cycle: {
    message: "a concurrent write made this batch an ancestor of the new parent; nothing was written, retry it",
    field: "parent_batch_id"
  },
  parts_parent_cycle: {
    message: "a concurrent write made this part an ancestor of the new parent; nothing was written, retry it",
    field: "parent_part_id"
  },
  // raised by an add-operations or batch create when a job of its operations was deleted after it began (migration
  // 0039); retried, the request is answered 422 FK_CONSTRAINT at that operation
  batch_operations_job_deleted: {
    message: "the job of an operation being added was deleted meanwhile; nothing was written, retry it",
    field: "operation_ids"
  },
  // raised by one-statement writes that a concurrent writer overtook (migration 0013)
  mes_conflict: { message: "a concurrent write changed records this request writes; nothing was written, retry it" }
}

const constraintOf = (e: SqlError): string | undefined => {
  const cause = (e as { reason?: { cause?: { constraint?: string; code?: string } ; constraint?: string } }).reason
  return cause?.constraint ?? cause?.cause?.constraint
}

/** read_only_sql_transaction (25006): the database takes no writes now (a standby, a demoted primary, default_transaction_read_only). */
export const takesNoWrites = (e: SqlError): boolean =>
  (e.reason as { readonly cause?: { readonly code?: unknown } }).cause?.code === "25006"

/**
 * A transaction the database rolled back because of another one: deadlock_detected (40P01) and serialization_failure
 * (40001), as the driver classifies them. The locking rules (ARCHITECTURE 2) are meant to leave none; should one
 * happen, its write left nothing behind (a statement or transaction is undone whole), so it is answered as a write a
 * concurrent writer overtook (409, retry it), not as a 500.
 */
const overtaken = (e: SqlError) => e.reason._tag === "DeadlockError" || e.reason._tag === "SerializationError"

const mapWith = (table: Record<string, { readonly message: string; readonly field?: string }>) =>
<A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, Exclude<E, SqlError> | Conflict, R> =>
  effect.pipe(
    Effect.catchIf(isSqlError, (e) => {
      const name = constraintOf(e)
      const c = name !== undefined ? table[name] ?? conflicts[name] : overtaken(e) ? conflicts.mes_conflict : undefined
      return c === undefined ? Effect.die(e) : Effect.fail(new Conflict(c))
    })
  ) as Effect.Effect<A, Exclude<E, SqlError> | Conflict, R>

/** Maps named unique/foreign-key violations, and rollbacks for another writer, to Conflict (409); anything else dies (500, a bug). */
export const mapConstraints = mapWith({})

/** mapConstraints for a part's delete, whose operations' dependants refuse it: "part cannot be deleted: one of its operations has …". */
export const mapPartDeleteConstraints = mapWith(operationRefusals((fact) => `part cannot be deleted: one of its operations ${fact}`))

/**
 * mapConstraints for a job sync. jobs_pkey: the job it found by its external key was deleted while the sync waited for
 * that delete to end; the key was then free (its index holds live jobs only), and the insert in its place took the
 * deleted job's id. Nothing was written: 409, retry it; retried, the sync is answered as after the delete (0040).
 */
export const mapJobSyncConstraints = mapWith({ jobs_pkey: conflicts.mes_conflict! })

/** Check constraints a PATCH can break through values it does not give (the stored ones): 422, as their create rules. */
const checks: Record<string, { readonly entity: string; readonly field: string; readonly constraint: "NOT_NULL" | "MIN_VALUE"; readonly message: string }> = {
  operation_quantities_scrap_reason_check: {
    entity: "operation_quantity",
    field: "scrap_reason_id",
    constraint: "NOT_NULL",
    message: "scrap_reason_id is required when scrap is greater than 0"
  },
  // migration 0038: a PATCH that zeroes the quantities it gives where the others are 0 already
  operation_quantities_some_quantity_check: {
    entity: "operation_quantity",
    field: "good",
    constraint: "MIN_VALUE",
    message: "at least one of good, scrap and rework must be greater than 0"
  },
  downtime_end_after_start_check: { entity: "downtime", field: "end_time", constraint: "MIN_VALUE", message: "end_time must not be before start_time" }
}

/** Maps the named check violations to 422 ValidationFailed; anything else is left to mapConstraints. */
export const mapChecks = <A, E, R>(effect: Effect.Effect<A, E | SqlError, R>): Effect.Effect<A, E | SqlError | ValidationFailed, R> =>
  effect.pipe(
    Effect.catchIf(
      (e): e is SqlError => isSqlError(e) && checks[constraintOf(e) ?? ""] !== undefined,
      (e) => {
        const c = checks[constraintOf(e)!]!
        return Effect.fail(validationFailed(c.entity, [detail(c.entity, {}, [c.field], c.constraint, c.message, null)]))
      }
    )
  ) as Effect.Effect<A, E | SqlError | ValidationFailed, R>
