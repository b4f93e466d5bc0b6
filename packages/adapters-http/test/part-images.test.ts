// Uploads and part images (issue 12 item 5): signed upload URLs served by mes itself, images attached to parts
// and served back through signed GET URLs, and every way a URL or an upload can be wrong.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import * as Duration from "effect/Duration"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { localDiskStorage } from "../src/storage/local-disk.ts"
import { capturingLogs, client, expectDetail, expectError, type Harness, nestedJob, startServer } from "./harness.ts"
import { scratchDir } from "./scratch.ts"

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82, 1, 2, 3, 4])
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, 74, 70, 73, 70, 0, 1])

let h: Harness
let api: ReturnType<typeof client>
let other: ReturnType<typeof client>
let tenantId: string
let origin: string
let part: string
let part2: string
const dir = scratchDir("mes-part-images-")

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

/** A PUT with a chunked body (no Content-Length), so only reading the stream can find it too large. */
const chunkedPut = (url: string, contentType: string, chunks: ReadonlyArray<Uint8Array>) =>
  new Promise<number>((resolve, reject) => {
    const u = new URL(h.url)
    const req = httpRequest({ host: u.hostname, port: u.port, path: url, method: "PUT", headers: { "content-type": contentType } }, (res) => {
      res.resume()
      resolve(res.statusCode!)
    })
    req.on("error", reject)
    for (const c of chunks) req.write(c)
    req.end()
  })

describe("more ways an upload or an attachment can be wrong", () => {
  it("a download URL does not upload: PUT to it is 403 and the file stays as it was", async () => {
    const u = await upload()
    const image = (await api.post("/api-parts-images", { part_id: part, storage_key: u.key })).body.data.part_image
    const jpegOverPng = await put(image.url, JPEG, "image/png")
    expect(jpegOverPng.status).toBe(403)
    expect((await put(`${image.url}&content_type=image%2Fpng&max_bytes=1000`, PNG, "image/png")).status).toBe(403)
    expect(new Uint8Array(await (await fetch(origin + image.url)).arrayBuffer())).toEqual(PNG)
  })

  it("an upload URL replaces its file until the file is attached; then PUT is 409 and the image stays as attached", async () => {
    const u = await upload()
    const bigger = new Uint8Array([...JPEG, ...JPEG, ...JPEG])
    expect((await put(u.upload_url, PNG, "image/png")).status).toBe(201)
    const image = (await api.post("/api-parts-images", { part_id: part, storage_key: u.key })).body.data.part_image
    expect(image.size_bytes).toBe(PNG.length)
    const again = await put(u.upload_url, new Uint8Array([...PNG, ...bigger]), "image/png")
    expect(again.status).toBe(409)
    expect(((await again.json()) as any).error.code).toBe("CONFLICT")
    // even a file renamed over the upload's own name (a PUT that raced the attachment) is not what the image shows
    writeFileSync(join(dir, `${u.key}.raced`), bigger)
    renameSync(join(dir, `${u.key}.raced`), join(dir, u.key))
    const read = (await api.get(`/api-parts-images?id=${image.id}`)).body.data.part_image
    expect(read.size_bytes).toBe(PNG.length)
    expect(new Uint8Array(await (await fetch(origin + read.url)).arrayBuffer())).toEqual(PNG)
    // deleting the image removes both names
    expect((await api.delete(`/api-parts-images?id=${image.id}`)).status).toBe(200)
    expect(readdirSync(join(dir, tenantId)).filter((f) => f.startsWith(u.key.split("/")[1]!))).toEqual([])
  })

  it("a URL without its signature or expiry is 403; methods other than PUT and GET are 405", async () => {
    const { upload_url: url } = (await api.post("/api-upload-url", { content_type: "image/png" })).body.data
    expect((await put(url.replace(/&signature=[0-9a-f]+/, ""), PNG, "image/png")).status).toBe(403)
    expect((await put(url.replace(/signature=[0-9a-f]+/, "signature=xyz"), PNG, "image/png")).status).toBe(403)
    expect((await put(url.replace(/expires=\d+&/, ""), PNG, "image/png")).status).toBe(403)
    const del = await fetch(origin + url, { method: "DELETE" })
    expect(del.status).toBe(405)
    expect(((await del.json()) as any).error.code).toBe("METHOD_NOT_ALLOWED")
    expect((await fetch(origin + url, { method: "PATCH", body: PNG })).status).toBe(405)
    // the URL still works after all that
    expect((await put(url, PNG, "image/png")).status).toBe(201)
  })

  it("a chunked body over the limit is 413 while it is read, and an empty body is 415; nothing is written", async () => {
    const before = readdirSync(join(dir, tenantId)).length
    const u = (await api.post("/api-upload-url", { content_type: "image/png", size_bytes: 30 })).body.data
    expect(await chunkedPut(u.upload_url, "image/png", [PNG, PNG])).toBe(413)
    expect(await chunkedPut(u.upload_url, "image/png", [])).toBe(415)
    expect(readdirSync(join(dir, tenantId)).length).toBe(before)
    expect(await chunkedPut(u.upload_url, "image/png", [PNG.subarray(0, 8), PNG.subarray(8)])).toBe(201)
    expect(existsSync(join(dir, u.key))).toBe(true)
  })

  it("a file the store cannot write (a directory where it goes) is 500 INTERNAL_ERROR in the envelope, logged without the URL's signature, and leaves no temporary file", async () => {
    const u = (await api.post("/api-upload-url", { content_type: "image/png" })).body.data
    mkdirSync(join(dir, u.key), { recursive: true })
    const before = readdirSync(join(dir, tenantId)).sort()
    const { value: res, logged } = await capturingLogs(() => put(u.upload_url, PNG, "image/png"))
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 500,
      body: { success: false, error: { code: "INTERNAL_ERROR", message: "Internal server error", statusCode: 500 } }
    })
    const line = logged.find((l) => l.includes("unhandled error"))
    expect(line).toContain(`PUT /functions/v1/storage/${u.key}?`)
    expect(line).toContain("signature=redacted")
    expect(line).not.toContain(u.upload_url.match(/signature=([0-9a-f]+)/)![1])
    expect(readdirSync(join(dir, tenantId)).sort()).toEqual(before)
    rmdirSync(join(dir, u.key))
    expect((await put(u.upload_url, PNG, "image/png")).status).toBe(201)
  })

  it("POST /api-upload-url: 405 for other methods, 400 for a body that is not JSON, 422 for bad sizes", async () => {
    expectError(await api.get("/api-upload-url"), 405, "METHOD_NOT_ALLOWED")
    expectError(await api.post("/api-upload-url", undefined, { raw: "{not json" }), 400, "BAD_REQUEST")
    expectDetail(await api.post("/api-upload-url", { content_type: "image/png", size_bytes: 0 }), "size_bytes", "MIN_VALUE")
    // too large to be exact (past 2^53, or 1e400 read as Infinity): one MAX_VALUE detail, not also "must be an integer"
    for (const size of ["9007199254740993", "1e400"]) {
      const res = await api.post("/api-upload-url", undefined, { raw: `{"content_type":"image/png","size_bytes":${size}}` })
      expectDetail(res, "size_bytes", "MAX_VALUE")
      expect(res.body.error.details.map((d: any) => [d.field, d.constraint, d.message]), size).toEqual([
        ["size_bytes", "MAX_VALUE", "size_bytes must be at most 2147483647"]
      ])
    }
    expectDetail(await api.post("/api-upload-url", { content_type: 42 }), "content_type", "ENUM_CONSTRAINT")
    const ok = await api.post("/api-upload-url", { content_type: "image/webp", file_name: "x.webp" })
    expect(ok.body.data.key).toMatch(/\.webp$/)
    expect((await api.post("/api-upload-url", { content_type: "image/gif" })).body.data.key).toMatch(/\.gif$/)
  })

  it("POST /api-parts-images: 422 for missing or mistyped fields and an unknown part, 400 for a body that is not JSON", async () => {
    const u = await upload()
    const missing = await api.post("/api-parts-images", {})
    expectDetail(missing, "part_id", "NOT_NULL")
    expectDetail(missing, "storage_key", "NOT_NULL")
    expectDetail(await api.post("/api-parts-images", { part_id: part, storage_key: u.key, is_primary: "yes" }), "is_primary", "TYPE_MISMATCH")
    expectDetail(await api.post("/api-parts-images", { part_id: "00000000-0000-4000-8000-000000000000", storage_key: u.key }), "part_id", "FK_CONSTRAINT")
    expectError(await api.post("/api-parts-images", undefined, { raw: "[" }), 400, "BAD_REQUEST")
    // none of those attached it
    const image = await api.post("/api-parts-images", { part_id: part, storage_key: u.key, is_primary: false, caption: null })
    expect(image.status).toBe(201)
    expect(image.body.data.part_image).toMatchObject({ is_primary: false, caption: null, file_name: null })
  })

  it("PATCH clears caption and file name, and can leave a part without a primary image; list filters are checked", async () => {
    const u = await upload()
    const job = (await api.post("/api-jobs", nestedJob("IMG-PATCH"))).body.data
    const p = job.parts[0].part_id
    const image = (await api.post("/api-parts-images", { part_id: p, storage_key: u.key, caption: "c", file_name: "f.png" })).body.data.part_image
    expect(image.is_primary).toBe(true)
    const patched = (await api.patch(`/api-parts-images?id=${image.id}`, { caption: null, file_name: null, is_primary: false })).body.data.part_image
    expect(patched).toMatchObject({ caption: null, file_name: null, is_primary: false, storage_key: u.key })
    expect((await api.get(`/api-parts-images?part_id=${p}&is_primary=true`)).body.data.part_images).toEqual([])
    expectDetail(await api.patch(`/api-parts-images?id=${image.id}`, { is_primary: "no" }), "is_primary", "TYPE_MISMATCH")
    expectError(await api.get("/api-parts-images?is_primary=maybe"), 400, "BAD_REQUEST")
    expectError(await api.get("/api-parts-images?part_id=not-a-uuid"), 400, "BAD_REQUEST")
    const sorted = (await api.get(`/api-parts-images?part_id=${part2}&sort=is_primary&order=desc`)).body.data.part_images
    expect(sorted[0].is_primary).toBe(true)
  })
})

describe("the URL signing key of a storage directory", () => {
  it("is made once (64 hex digits, 0600) and shared: a URL one server signed works on another over the directory", async () => {
    const shared = scratchDir("mes-storage-key-")
    const [one, two] = await Promise.all([0, 1].map(() => startServer({ env: { MES_STORAGE_DIR: shared } })))
    try {
      const key = readFileSync(join(shared, ".signing-key"), "utf8")
      expect(key).toMatch(/^[0-9a-f]{64}$/)
      expect(statSync(join(shared, ".signing-key")).mode & 0o777).toBe(0o600)
      expect(readdirSync(shared)).toEqual([".signing-key"])
      const u = (await (await one!.as("Key one")).api.post("/api-upload-url", { content_type: "image/png" })).body.data
      const res = await fetch(new URL(two!.url).origin + u.upload_url, { method: "PUT", headers: { "content-type": "image/png" }, body: PNG })
      expect(res.status).toBe(201)
    } finally {
      await Promise.all([one!.close(), two!.close()])
    }
  })

  it("an unusable key file (empty, say) is refused at start rather than signing with it", async () => {
    const broken = scratchDir("mes-storage-key-")
    writeFileSync(join(broken, ".signing-key"), "")
    const options = { dir: broken, secret: undefined, maxBytes: 1000, urlTtl: Duration.minutes(1) }
    expect(() => localDiskStorage(options, "/functions/v1")).toThrow(/signing key/)
    expect(() => localDiskStorage({ ...options, secret: "a-configured-key-of-32-bytes-ok!" }, "/functions/v1")).not.toThrow()
    // an embedding service's own key is held to what MES_STORAGE_SECRET is
    expect(() => localDiskStorage({ ...options, secret: "configured" }, "/functions/v1"))
      .toThrow("secret is 10 bytes long: an HMAC-SHA256 key must be at least 32 bytes")
  })
})
