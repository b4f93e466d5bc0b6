// The part status roll-up (spec 2.2, 3.2) as CTEs of a statement that moves operations: a part is
// completed when all its operations are, in progress once any has started. The part's operations are
// read as the statement leaves them (the moved ones with their new status), and only parts whose status
// changes are written, with part.started / part.completed.
import { eventPlan } from "@mes/domain"
import { type Catalog, fieldOf } from "./catalog.ts"
import type { EventSource } from "./events.ts"

/** A part's status rolled up from its operations' `status` (an aggregate over them); `current` otherwise. */
export const rolledUpStatus = (status: string, current: string) =>
  `CASE WHEN bool_and(${status} = 'completed') THEN 'completed' WHEN bool_or(${status} <> 'not_started') THEN 'in_progress' ELSE ${current} END`

/**
 * `moved`: a CTE of the moved operations (id, part_id, status after the move); `parts`: SQL that yields
 * the ids of the parts to roll up. Adds CTEs `rs` (the rolled-up status) and `pu` (the parts written).
 */
export const rollUp = (catalog: Catalog["Service"], moved: string, parts: string) => {
  const ctes: Array<readonly [string, string]> = [["rs", `
      SELECT p.id, p.status AS previous, ${rolledUpStatus("coalesce(mm.status, o.status)", "p.status")} AS status
      FROM parts p JOIN operations o ON o.tenant_id = $1 AND o.part_id = p.id
      LEFT JOIN ${moved} mm ON mm.id = o.id
      WHERE p.tenant_id = $1 AND p.id IN (${parts})
      GROUP BY p.id, p.status`], ["pu", `
      UPDATE parts p SET status = rs.status, updated_at = now()
      FROM rs WHERE p.tenant_id = $1 AND p.id = rs.id AND p.status <> rs.status
      RETURNING p.*, rs.previous`]]
  const event = (type: "part.started" | "part.completed", where: string): EventSource => ({
    event: eventPlan(type),
    from: `pu WHERE ${where}`,
    payload: { field: fieldOf(catalog.columns("parts"), "pu"), record: "pu.doc", previous: "pu.previous" }
  })
  return {
    ctes,
    events: [event("part.completed", "pu.status = 'completed'"), event("part.started", "pu.status = 'in_progress' AND pu.previous = 'not_started'")]
  }
}
