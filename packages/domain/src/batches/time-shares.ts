// distributeBatchTime (spec 3.3): a stopped batch's tracked seconds shared across its operations,
// weighted by estimated_time_minutes when every operation has one (and they sum above zero), else
// equally. Integer seconds by largest remainder, so the shares sum to the tracked time exactly.

export interface ShareInput {
  readonly operation_id: string
  readonly estimated_time_minutes: number | null
}

export interface Share {
  readonly operation_id: string
  readonly basis: "estimated_time" | "equal"
  readonly weight: number
  readonly tracked_seconds: number
  readonly share_seconds: number
  readonly share_minutes: number
}

export const distributeBatchTime = (trackedSeconds: number, operations: ReadonlyArray<ShareInput>): Array<Share> => {
  if (operations.length === 0) return []
  const tracked = Math.max(0, Math.floor(trackedSeconds))
  const estimated = operations.every((o) => o.estimated_time_minutes !== null && o.estimated_time_minutes >= 0) &&
    operations.reduce((s, o) => s + (o.estimated_time_minutes ?? 0), 0) > 0
  const weights = operations.map((o) => (estimated ? o.estimated_time_minutes! : 1))
  // The arithmetic's weights (migration 0041 computes the same): past 2^510 they are taken × 2^-600, a power of two,
  // which changes no product, sum or quotient but an overflow (estimates near the largest double); a weight below
  // 2^-900 of the largest (when that is 2^-100 or more) counts as 0, its share being far below a second, where its
  // quotient would underflow to 0 (which PostgreSQL refuses).
  const top = weights.reduce((m, w) => Math.max(m, w), 0)
  const scale = top > 2 ** 510 ? 2 ** -600 : 1
  const scaled = weights.map((w) => (top >= 2 ** -100 && w < top * 2 ** -900 ? 0 : w * scale))
  const total = scaled.reduce((s, w) => s + w, 0)
  const exact = scaled.map((w) => (tracked * w) / total)
  const floors = exact.map(Math.floor)
  let left = tracked - floors.reduce((s, f) => s + f, 0)
  // hand the remaining seconds to the largest fractional parts, earlier operations first on ties
  const order = exact.map((e, i) => ({ i, frac: e - floors[i]! })).sort((a, b) => b.frac - a.frac || a.i - b.i)
  for (const { i } of order) {
    if (left === 0) break
    floors[i]! += 1
    left--
  }
  return operations.map((o, i) => ({
    operation_id: o.operation_id,
    basis: estimated ? "estimated_time" : "equal",
    weight: weights[i]!,
    tracked_seconds: tracked,
    share_seconds: floors[i]!,
    share_minutes: floors[i]! / 60
  }))
}
