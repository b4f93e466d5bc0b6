// OEE ratios from their inputs (docs/DECISIONS.md "Shop floor").
import { describe, expect, it } from "vitest"
import { oeeRow, type OeeInputs } from "../src/shop-floor/service.ts"

const inputs = (o: Partial<OeeInputs>): OeeInputs => ({
  group: "2026-01-05", cell_id: null, cell_name: null, from: "a", to: "b",
  run_minutes: 0, unplanned_downtime_minutes: 0, planned_downtime_minutes: 0, ideal_minutes: 0, good: 0, scrap: 0, rework: 0,
  ...o
})

describe("oeeRow", () => {
  it("availability = run / (run + unplanned downtime), performance = ideal / run, quality = good / all, OEE their product", () => {
    const row = oeeRow(inputs({ run_minutes: 120, unplanned_downtime_minutes: 30, planned_downtime_minutes: 60, ideal_minutes: 90, good: 12, scrap: 2, rework: 1 }))
    expect(row).toMatchObject({ planned_production_minutes: 150, availability: 0.8, performance: 0.75, quality: 0.8, oee: 0.48 })
  })

  it("planned downtime does not count against availability", () => {
    expect(oeeRow(inputs({ run_minutes: 60, planned_downtime_minutes: 600, ideal_minutes: 60, good: 1 })).availability).toBe(1)
  })

  it("a ratio whose denominator is 0 is null, and so is OEE", () => {
    expect(oeeRow(inputs({}))).toMatchObject({ availability: null, performance: null, quality: null, oee: null })
    expect(oeeRow(inputs({ unplanned_downtime_minutes: 30 }))).toMatchObject({ availability: 0, performance: null, oee: null })
  })

  it("performance is not capped; ratios are rounded to 4 decimals, minutes to 2", () => {
    const row = oeeRow(inputs({ run_minutes: 30.123456, ideal_minutes: 45, good: 2, scrap: 1 }))
    expect(row.performance).toBe(1.4939)
    expect(row.quality).toBe(0.6667)
    expect(row.run_minutes).toBe(30.12)
  })
})
