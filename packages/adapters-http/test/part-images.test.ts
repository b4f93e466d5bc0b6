// Uploads and part images (issue 12 item 5): signed upload URLs served by mes itself, images attached to parts
// and served back through signed GET URLs, and every way a URL or an upload can be wrong.
import { existsSync, mkdtempSync, readdirSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 4])
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1])

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let tenantId: string
let origin: string
let part: string
let part2: string
const dir = mkdtempSync(join(tmpdir(), "mes-part-images-"))

beforeAll(async () => {
  h = await startServer({ env: { MES_STORAGE_DIR: dir, MES_UPLOAD_MAX_BYTES: "1000" } })
  origin = new URL(h.url).origin
  ;({ api, tenantId } = await h.as("Images"))
  other = (await h.as("Images other")).api
  const job = (await api.post("/api-jobs", nestedJob("IMG-1", 2))).body.data
  part = job.parts[0].part_id
  part2 = job.parts[1].part_id
})
afterAll(() => h.close())

const put = (url: string, body: Uint8Array, contentType: string) =>
  fetch(origin + url, { method: "PUT", headers: { "content-type": contentType }, body })

/** An upload URL, and the file PUT to it. */
const upload = async (bytes: Uint8Array = PNG, type = "image/png", as = api) => {
  const res = await as.post("/api-upload-url", { content_type: type, file_name: "photo" })
  expect(res.status).toBe(201)
  const u = res.body.data
  const sent = await put(u.upload_url, bytes, type)
  expect(sent.status).toBe(201)
  return u as { key: string; upload_url: string }
}

/** A request with the path exactly as written (fetch would normalize `..`). */
const rawGet = (path: string) =>
  new Promise<number>((resolve, reject) => {
    const u = new URL(h.url)
    const req = httpRequest({ host: u.hostname, port: u.port, path, method: "GET" }, (res) => {
      res.resume()
      resolve(res.statusCode!)
    })
    req.on("error", reject)
    req.end()
  })

describe("POST /api-upload-url", () => {
  it("answers a signed URL to PUT one file of the tenant to, with its limits", async () => {
    const res = await api.post("/api-upload-url", { content_type: "image/jpeg", size_bytes: 500 })
    expect(res.status).toBe(201)
    expect(res.body.data).toMatchObject({ method: "PUT", headers: { "content-type": "image/jpeg" }, max_bytes: 500 })
    expect(res.body.data.key).toMatch(new RegExp(`^${tenantId}/[0-9a-f-]{36}\\.jpg$`))
    expect(res.body.data.upload_url).toMatch(/^\/functions\/v1\/storage\/.+signature=[0-9a-f]{64}$/)
    expect(Date.parse(res.body.data.expires_at)).toBeGreaterThan(Date.now())
  })

  it("refuses other content types, sizes over the limit and a missing type (422)", async () => {
    expectDetail(await api.post("/api-upload-url", { content_type: "application/pdf" }), "content_type", "ENUM_CONSTRAINT")
    expectDetail(await api.post("/api-upload-url", { content_type: "image/svg+xml" }), "content_type", "ENUM_CONSTRAINT")
    expectDetail(await api.post("/api-upload-url", { content_type: "image/png", size_bytes: 1001 }), "size_bytes", "MAX_VALUE")
    expectDetail(await api.post("/api-upload-url", {}), "content_type", "NOT_NULL")
    expectError(await client(h.url).post("/api-upload-url", { content_type: "image/png" }), 401, "UNAUTHORIZED")
  })
})

describe("signed storage URLs", () => {
  it("the round trip: PUT the file, attach it to a part, GET it back through the image's signed URL", async () => {
    const u = await upload()
    const attached = await api.post("/api-parts-images", { part_id: part, storage_key: u.key, caption: "as cut" })
    expect(attached.status).toBe(201)
    const image = attached.body.data.part_image
    expect(image).toMatchObject({ part_id: part, storage_key: u.key, content_type: "image/png", size_bytes: PNG.length, caption: "as cut", is_primary: true })
    expect(image.url).toMatch(/^\/functions\/v1\/storage\/.+signature=/)
    const got = await fetch(origin + image.url)
    expect(got.status).toBe(200)
    expect(got.headers.get("content-type")).toBe("image/png")
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(PNG)
  })

  it("refuses a changed signature, content type, size limit, key or method, and an expired URL (403)", async () => {
    const { upload_url: url } = (await api.post("/api-upload-url", { content_type: "image/png", size_bytes: 100 })).body.data
    const other = (await api.post("/api-upload-url", { content_type: "image/png" })).body.data
    const tamper = (from: RegExp, to: string) => url.replace(from, to)
    const cases = [
      tamper(/signature=([0-9a-f])/, `signature=${url.match(/signature=([0-9a-f])/)![1] === "0" ? "1" : "0"}`),
      tamper(/content_type=image%2Fpng/, "content_type=image%2Fjpeg"),
      tamper(/max_bytes=100/, "max_bytes=1000"),
      tamper(/expires=(\d+)/, `expires=${Date.now() + 3_600_000}`),
      // another key of the tenant (same type) with this URL's signature
      other.upload_url.replace(/signature=[0-9a-f]+/, url.match(/signature=[0-9a-f]+/)![0])
    ]
    for (const bad of cases) {
      const res = await put(bad, PNG, bad.includes("image%2Fjpeg") ? "image/jpeg" : "image/png")
      expect(res.status, bad).toBe(403)
      expect(((await res.json()) as any).error.code).toBe("FORBIDDEN")
    }
    // an upload URL does not download, and a signed URL takes PUT or GET only
    expect((await fetch(origin + url)).status).toBe(403)
    expect((await fetch(origin + url, { method: "POST", body: PNG })).status).toBe(405)
    const short = await startServer({ env: { MES_STORAGE_DIR: dir, MES_STORAGE_URL_TTL: "1ms" } })
    try {
      const a = (await short.as("Short")).api
      const u = (await a.post("/api-upload-url", { content_type: "image/png" })).body.data
      await new Promise((r) => setTimeout(r, 20))
      const res = await fetch(new URL(short.url).origin + u.upload_url, { method: "PUT", headers: { "content-type": "image/png" }, body: PNG })
      expect(res.status).toBe(403)
      expect(((await res.json()) as any).error.message).toContain("expired")
    } finally {
      await short.close()
    }
  })

  it("refuses another content type, a file that is not what it says, and one over the limit; writes nothing", async () => {
    const before = readdirSync(join(dir, tenantId)).length
    const { key, upload_url: url } = (await api.post("/api-upload-url", { content_type: "image/png", size_bytes: 12 })).body.data
    expect((await put(url, PNG, "image/jpeg")).status).toBe(415)
    expect((await put(url, JPEG, "image/png")).status).toBe(415)
    expect((await put(url, PNG, "image/png")).status).toBe(413)
    const big = (await api.post("/api-upload-url", { content_type: "image/jpeg" })).body.data
    const huge = new Uint8Array(5000)
    huge.set(JPEG)
    expect((await put(big.upload_url, huge, "image/jpeg")).status).toBe(413)
    expect(readdirSync(join(dir, tenantId)).length).toBe(before)
    expectDetail(await api.post("/api-parts-images", { part_id: part, storage_key: key }), "storage_key", "FK_CONSTRAINT")
  })

  it("paths that are not keys mes made never reach the disk (404)", async () => {
    for (const path of [
      "/functions/v1/storage/../../../etc/passwd",
      "/functions/v1/storage/%2e%2e/%2e%2e/etc/passwd",
      `/functions/v1/storage/${tenantId}/..%2F..%2Fsecret.png`,
      `/functions/v1/storage/${tenantId}/.signing-key`,
      "/functions/v1/storage/.signing-key"
    ]) {
      expect(await rawGet(path), path).toBe(404)
    }
  })
})

describe("/api-parts-images", () => {
  it("lists a part's images, keeps one primary, updates captions; a key is attached once (409)", async () => {
    const a = await upload()
    const b = await upload(JPEG, "image/jpeg")
    const first = (await api.post("/api-parts-images", { part_id: part2, storage_key: a.key })).body.data.part_image
    const second = (await api.post("/api-parts-images", { part_id: part2, storage_key: b.key, file_name: "side.jpg" })).body.data.part_image
    expect([first.is_primary, second.is_primary]).toEqual([true, false])
    expectError(await api.post("/api-parts-images", { part_id: part2, storage_key: a.key }), 409, "CONFLICT")
    const made = await api.patch(`/api-parts-images?id=${second.id}`, { is_primary: true, caption: "side view" })
    expect(made.status).toBe(200)
    expect(made.body.data.part_image).toMatchObject({ is_primary: true, caption: "side view", url: expect.any(String) })
    const list = (await api.get(`/api-parts-images?part_id=${part2}`)).body.data
    expect(list.part_images.map((i: any) => [i.id, i.is_primary])).toEqual([[first.id, false], [second.id, true]])
    expect(list.part_images.every((i: any) => typeof i.url === "string")).toBe(true)
    expect((await api.get(`/api-parts-images?part_id=${part2}&is_primary=true`)).body.data.part_images.map((i: any) => i.id)).toEqual([second.id])
    const read = (await api.get(`/api-parts-images?id=${first.id}`)).body.data.part_image
    expect((await fetch(origin + read.url)).status).toBe(200)
    // the file of an image stays; a key another image has is 409 before the field is refused (spec 7.4)
    expectDetail(await api.patch(`/api-parts-images?id=${first.id}`, { storage_key: "other" }), "storage_key", "ENUM_CONSTRAINT")
    expectError(await api.patch(`/api-parts-images?id=${first.id}`, { storage_key: b.key }), 409, "CONFLICT")
  })

  it("deleting an image removes its file", async () => {
    const u = await upload()
    const image = (await api.post("/api-parts-images", { part_id: part, storage_key: u.key })).body.data.part_image
    expect(existsSync(join(dir, u.key))).toBe(true)
    expect((await api.delete(`/api-parts-images?id=${image.id}`)).body.data).toEqual({ id: image.id, deleted: true })
    expect(existsSync(join(dir, u.key))).toBe(false)
    expect((await fetch(origin + image.url)).status).toBe(404)
    expectError(await api.get(`/api-parts-images?id=${image.id}`), 404, "NOT_FOUND")
  })

  it("another tenant's upload, part or image is not the caller's", async () => {
    const theirs = await upload(PNG, "image/png", other)
    expectDetail(await api.post("/api-parts-images", { part_id: part, storage_key: theirs.key }), "storage_key", "FK_CONSTRAINT")
    const theirJob = (await other.post("/api-jobs", nestedJob("IMG-THEIRS"))).body.data
    const theirImage = (await other.post("/api-parts-images", { part_id: theirJob.parts[0].part_id, storage_key: theirs.key })).body.data.part_image
    const mine = await upload()
    expectDetail(await api.post("/api-parts-images", { part_id: theirJob.parts[0].part_id, storage_key: mine.key }), "part_id", "FK_CONSTRAINT")
    expectError(await api.get(`/api-parts-images?id=${theirImage.id}`), 403, "FORBIDDEN")
    expectError(await api.delete(`/api-parts-images?id=${theirImage.id}`), 403, "FORBIDDEN")
    expect(existsSync(join(dir, theirs.key))).toBe(true)
    expectDetail(await api.post("/api-parts-images", { part_id: part, storage_key: "../../etc/passwd" }), "storage_key", "FK_CONSTRAINT")
  })
})
