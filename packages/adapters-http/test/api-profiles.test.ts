import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, type Reply, startServer } from "./harness.ts"

let h: Harness
let api: ReturnType<typeof client>
let apiB: ReturnType<typeof client>
let tenantA: string

const UNKNOWN = "00000000-0000-4000-8000-000000000000"

const createProfile = async (body: Record<string, unknown>, as = api) => {
  const res = await as.post("/api-profiles", body)
  expect(res.status).toBe(201)
  return res.body.data.profile
}

/** A nested job whose first operation is assigned to `operatorId`. */
const assignedJob = (jobNumber: string, operatorId: string) => {
  const job = nestedJob(jobNumber)
  job.parts[0]!.operations[0] = { ...job.parts[0]!.operations[0]!, assigned_operator_id: operatorId } as any
  return job
}

beforeAll(async () => {
  h = await startServer()
  ;({ tenantId: tenantA, api } = await h.as("A"))
  apiB = (await h.as("B")).api
})
afterAll(() => h.close())

describe("POST /api-profiles", () => {
  it("creates a profile with every field and answers 201 data.profile", async () => {
    const body = { display_name: "Ada Admin", email: "ada@example.com", role: "admin", active: false }
    const res = await api.post("/api-profiles", body)
    expect(res.status).toBe(201)
    expect(res.body.success).toBe(true)
    const { profile } = res.body.data
    expect(profile).toMatchObject({ ...body, tenant_id: tenantA })
    expect(profile.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(typeof profile.created_at).toBe("string")
    expect(typeof profile.updated_at).toBe("string")
  })

  it("defaults role to operator, active to true and email to null", async () => {
    const profile = await createProfile({ display_name: "Otto" })
    expect(profile).toMatchObject({ display_name: "Otto", role: "operator", active: true, email: null })
  })

  it("answers 422 with a detail per invalid field", async () => {
    const res = await api.post("/api-profiles", { email: "not-an-email", role: "boss", active: "yes" })
    expectDetail(res, "display_name", "NOT_NULL")
    expectDetail(res, "email", "PATTERN_MISMATCH")
    expectDetail(res, "role", "ENUM_CONSTRAINT")
    expectDetail(res, "active", "TYPE_MISMATCH")
    expect(res.body.error.details[0].entityType).toBe("profile")
    expectDetail(await api.post("/api-profiles", { display_name: "" }), "display_name", "MIN_LENGTH")
    expectDetail(await api.post("/api-profiles", { display_name: "d".repeat(256) }), "display_name", "MAX_LENGTH")
  })

  it("answers 400 for a body that is not JSON and 401 without a key", async () => {
    expectError(await api.post("/api-profiles", undefined, { raw: "not json" }), 400, "BAD_REQUEST")
    expectError(await client(h.url).post("/api-profiles", { display_name: "No key" }), 401, "UNAUTHORIZED")
  })

  it("answers 409 for a duplicate email in the tenant (case-insensitive), even when other fields are invalid", async () => {
    await createProfile({ display_name: "Bea", email: "bea@example.com" })
    expectError(await api.post("/api-profiles", { display_name: "Bea 2", email: "BEA@example.com" }), 409, "CONFLICT")
    expectError(await api.post("/api-profiles", { display_name: "Bea 3", email: "bea@example.com", role: "boss" }), 409, "CONFLICT")
  })

  it("allows profiles without email and the same email in another tenant", async () => {
    await createProfile({ display_name: "No mail 1" })
    await createProfile({ display_name: "No mail 2", email: null })
    const other = await createProfile({ display_name: "Bea elsewhere", email: "bea@example.com" }, apiB)
    expect(other.tenant_id).not.toBe(tenantA)
  })
})

describe("GET /api-profiles", () => {
  let list: ReturnType<typeof client>
  const profiles: Record<string, any> = {}
  const names = (res: Reply) => res.body.data.profiles.map((p: any) => p.display_name)

  beforeAll(async () => {
    list = client(h.url, (await h.tenant("Lists")).key)
    for (const body of [
      { display_name: "Carla", email: "carla@shop.test", role: "admin" },
      { display_name: "Anton", email: "anton@shop.test" },
      { display_name: "Bruno", email: "bruno@other.test", active: false },
      { display_name: "Dora" }
    ]) profiles[body.display_name] = await createProfile(body, list)
  })

  it("lists the tenant's profiles newest first with pagination", async () => {
    const res = await list.get("/api-profiles")
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(names(res)).toEqual(["Dora", "Bruno", "Anton", "Carla"])
    expect(res.body.data.pagination).toEqual({ limit: 100, offset: 0, total: 4 })
  })

  it("filters by role, active, email (exact, case-insensitive) and search", async () => {
    expect(names(await list.get("/api-profiles?role=admin"))).toEqual(["Carla"])
    expect(names(await list.get("/api-profiles?role=operator&sort=display_name&order=asc"))).toEqual(["Anton", "Bruno", "Dora"])
    expect(names(await list.get("/api-profiles?active=false"))).toEqual(["Bruno"])
    expect(names(await list.get("/api-profiles?active=true&sort=display_name&order=asc"))).toEqual(["Anton", "Carla", "Dora"])
    expect(names(await list.get("/api-profiles?email=ANTON@shop.test"))).toEqual(["Anton"])
    expect(names(await list.get("/api-profiles?email=shop.test"))).toEqual([])
    expect(names(await list.get("/api-profiles?search=SHOP&sort=display_name&order=asc"))).toEqual(["Anton", "Carla"])
    expect(names(await list.get("/api-profiles?search=dor"))).toEqual(["Dora"])
  })

  it("sorts by display_name, role and created_at in both orders", async () => {
    expect(names(await list.get("/api-profiles?sort=display_name&order=asc"))).toEqual(["Anton", "Bruno", "Carla", "Dora"])
    expect(names(await list.get("/api-profiles?sort=display_name&order=desc"))).toEqual(["Dora", "Carla", "Bruno", "Anton"])
    expect(names(await list.get("/api-profiles?sort=role&order=asc&limit=1"))).toEqual(["Carla"])
    expect(names(await list.get("/api-profiles?sort=role&order=desc")).at(-1)).toBe("Carla")
    expect(names(await list.get("/api-profiles?sort=created_at&order=asc"))).toEqual(["Carla", "Anton", "Bruno", "Dora"])
  })

  it("pages with limit and offset and reports the total", async () => {
    const page = await list.get("/api-profiles?sort=display_name&order=asc&limit=2&offset=2")
    expect(names(page)).toEqual(["Carla", "Dora"])
    expect(page.body.data.pagination).toEqual({ limit: 2, offset: 2, total: 4 })
    const past = await list.get("/api-profiles?offset=50")
    expect(past.body.data).toEqual({ profiles: [], pagination: { limit: 100, offset: 50, total: 4 } })
  })

  it("reads one profile with ?id=", async () => {
    const res = await list.get(`/api-profiles?id=${profiles.Anton.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { profile: profiles.Anton } })
  })

})

describe("PATCH /api-profiles", () => {
  it("updates fields, clears the email and answers data.profile", async () => {
    const profile = await createProfile({ display_name: "Emil", email: "emil@example.com" })
    const res = await api.patch(`/api-profiles?id=${profile.id}`, { display_name: "Emil R.", role: "admin", active: false, email: null })
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(res.body.data.profile).toMatchObject({ id: profile.id, display_name: "Emil R.", role: "admin", active: false, email: null })
    expect((await api.get(`/api-profiles?id=${profile.id}`)).body.data.profile.display_name).toBe("Emil R.")
  })

  it("keeps its own email and refuses another profile's email with 409", async () => {
    const profile = await createProfile({ display_name: "Fritz", email: "fritz@example.com" })
    await createProfile({ display_name: "Gina", email: "gina@example.com" })
    expect((await api.patch(`/api-profiles?id=${profile.id}`, { email: "Fritz@example.com" })).status).toBe(200)
    expectError(await api.patch(`/api-profiles?id=${profile.id}`, { email: "gina@example.com" }), 409, "CONFLICT")
    expectError(await api.patch(`/api-profiles?id=${profile.id}`, { email: "GINA@example.com", role: "boss" }), 409, "CONFLICT")
  })

  it("answers 422 with details for invalid fields and fields that cannot be updated", async () => {
    const profile = await createProfile({ display_name: "Hans" })
    expectDetail(await api.patch(`/api-profiles?id=${profile.id}`, { role: "boss" }), "role", "ENUM_CONSTRAINT")
    expectDetail(await api.patch(`/api-profiles?id=${profile.id}`, { email: "hans" }), "email", "PATTERN_MISMATCH")
    expectDetail(await api.patch(`/api-profiles?id=${profile.id}`, { id: UNKNOWN }), "id", "ENUM_CONSTRAINT")
  })

})

describe("DELETE /api-profiles", () => {
  it("deletes a profile and answers data {id, deleted: true}", async () => {
    const profile = await createProfile({ display_name: "Leaving" })
    const res = await api.delete(`/api-profiles?id=${profile.id}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ success: true, data: { id: profile.id, deleted: true } })
    expectError(await api.get(`/api-profiles?id=${profile.id}`), 404, "NOT_FOUND")
    expectError(await api.delete(`/api-profiles?id=${profile.id}`), 404, "NOT_FOUND")
  })

  it("answers 409 while an operation is assigned to the profile", async () => {
    const profile = await createProfile({ display_name: "Busy operator" })
    expect((await api.post("/api-jobs", assignedJob("J-OP-1", profile.id))).status).toBe(201)
    expectError(await api.delete(`/api-profiles?id=${profile.id}`), 409, "CONFLICT")
    expect((await api.get(`/api-profiles?id=${profile.id}`)).status).toBe(200)
  })
})
