// Uploaded files on the local disk (issue 12; docs/DECISIONS.md "Part images and uploads"): the storage port over
// a directory (MES_STORAGE_DIR), and the short-lived signed URLs mes itself serves to PUT and GET them. A URL's
// HMAC-SHA256 signature covers its method, key, content type, size limit and expiry, so none can be changed.
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from "node:crypto"
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { link, readFile, rename, rm, stat, writeFile } from "node:fs/promises"
import { dirname, join, resolve, sep } from "node:path"
import * as Config from "effect/Config"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { directories, durationConfig, type ImageType, integerConfig, secretConfig, shortHmacKey, Storage, storageKey, typeOfKey } from "@mes/domain"
import { errorEnvelope } from "../errors.ts"

export interface StorageOptions {
  /** The directory files are kept in (MES_STORAGE_DIR; default: `storage` beside MES_DATA_DIR). */
  readonly dir: string
  /** The HMAC key of signed URLs (MES_STORAGE_SECRET; default: a random key kept in the directory). */
  readonly secret: string | undefined
  /** The largest upload (MES_UPLOAD_MAX_BYTES). */
  readonly maxBytes: number
  /** How long a signed URL works (MES_STORAGE_URL_TTL). */
  readonly urlTtl: Duration.Duration
}

export const StorageOptionsConfig = Config.all({
  dir: Config.String("MES_STORAGE_DIR").pipe(
    Config.option,
    Config.map(Option.filter((s) => s !== "")),
    Config.flatMap((dir) =>
      Option.isSome(dir)
        ? Config.succeed(dir.value)
        : Config.String("MES_DATA_DIR").pipe(Config.withDefault("./.mes/data"), Config.map((data) => join(dirname(resolve(data)), "storage")))
    )
  ),
  secret: secretConfig("MES_STORAGE_SECRET", { hmacKey: true }),
  maxBytes: integerConfig("MES_UPLOAD_MAX_BYTES", 10 * 1024 * 1024, { min: 1 }),
  urlTtl: durationConfig("MES_STORAGE_URL_TTL", Duration.minutes(15), { positive: true })
})

/** The first bytes each image type starts with (a file that does not is refused: 415). */
const MAGIC: Record<ImageType, (b: Uint8Array) => boolean> = {
  "image/jpeg": (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  "image/png": (b) => [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((v, i) => b[i] === v),
  "image/gif": (b) => String.fromCharCode(...b.subarray(0, 4)) === "GIF8",
  "image/webp": (b) => String.fromCharCode(...b.subarray(0, 4)) === "RIFF" && String.fromCharCode(...b.subarray(8, 12)) === "WEBP"
}

const fail = (status: number, code: string, message: string) =>
  HttpServerResponse.jsonUnsafe(errorEnvelope(status, code, message), { status, headers: { "access-control-allow-origin": "*" } })

/** A signed URL's parameters. */
interface Signed {
  readonly method: "PUT" | "GET"
  readonly key: string
  readonly contentType: string
  readonly maxBytes: number
  readonly expires: number
}

export const STORAGE_PATH = "/storage/"

/** `mkdir -p` that always returns (the domain's; Node's own never returned under procfs). */
const { make: makeDirectory, unusable: unusableDirectory } = directories({ statSync, mkdirSync }, { resolve, dirname })

/** The local-disk storage: the port, the signer of URLs, and the handler of the signed requests. */
export const localDiskStorage = (o: StorageOptions, basePath: string) => {
  const short = o.secret === undefined ? undefined : shortHmacKey("secret", o.secret)
  if (short !== undefined) throw new Error(short)
  const root = resolve(o.dir)
  // a file there, under one, EACCES, or procfs (where Node's own recursive mkdir never returned): said as the
  // setting, not as a bare mkdir
  const unusable = unusableDirectory(root, 0o700)
  if (unusable !== undefined) throw new Error(`The storage directory ${o.dir} (MES_STORAGE_DIR) ${unusable}`)
  const secret = o.secret ?? (() => {
    // one key per directory: URLs survive restarts and work across processes sharing the directory. It is
    // written under a temporary name and linked into place (atomic, and refused when one is there already), so a
    // process starting beside another never reads a half-written (empty) key, and the first one written wins.
    const file = join(root, ".signing-key")
    const read = () => {
      try {
        return readFileSync(file, "utf8").trim()
      } catch {
        return ""
      }
    }
    if (read() === "") {
      const temporary = `${file}.${randomUUID()}`
      writeFileSync(temporary, randomBytes(32).toString("hex"), { mode: 0o600 })
      try {
        linkSync(temporary, file)
      } catch {
        // another process linked its key first (or an unusable file is there: refused below)
      } finally {
        rmSync(temporary, { force: true })
      }
    }
    const key = read()
    if (!/^[0-9a-f]{64}$/.test(key)) {
      throw new Error(`The URL signing key ${file} is not 64 hex digits: remove it (a new one is made) or set MES_STORAGE_SECRET`)
    }
    return key
  })()
  /** The file of a key mes made; undefined for anything else (no path of the client's reaches the disk). */
  const pathOf = (key: string) => {
    if (typeOfKey(key) === undefined) return undefined
    const path = resolve(root, key)
    return path.startsWith(root + sep) ? path : undefined
  }
  /**
   * Where the file of an attached key is kept: a hard link to the upload as it was when POST /api-parts-images took it
   * (`seal`). GET serves it, and no PUT replaces it (a PUT renames a new file over the upload's own name only).
   */
  const sealedOf = (path: string) => `${path}.attached`
  const signature = (s: Signed) =>
    createHmac("sha256", secret).update([s.method, s.key, s.contentType, String(s.maxBytes), String(s.expires)].join("\n")).digest("hex")
  const urlOf = (s: Signed) => {
    const q = new URLSearchParams({ expires: String(s.expires) })
    if (s.method === "PUT") {
      q.set("content_type", s.contentType)
      q.set("max_bytes", String(s.maxBytes))
    }
    q.set("signature", signature(s))
    return `${basePath}${STORAGE_PATH}${s.key}?${q.toString()}`
  }
  const expiry = () => Date.now() + Duration.toMillis(o.urlTtl)

  const storage = Storage.of({
    seal: (key) =>
      Effect.promise(async () => {
        const path = pathOf(key)
        const type = typeOfKey(key)
        if (path === undefined || type === undefined) return undefined
        // one sealed before (the key attached already, or its attachment refused after) stays as it is
        await link(path, sealedOf(path)).catch(() => undefined)
        const s = await stat(sealedOf(path)).catch(() => undefined)
        return s?.isFile() ? { size: s.size, contentType: type } : undefined
      }),
    remove: (key) => Effect.promise(async () => {
      const path = pathOf(key)
      if (path !== undefined) await Promise.all([rm(sealedOf(path), { force: true }), rm(path, { force: true })])
    })
  })

  return {
    storage,
    maxBytes: o.maxBytes,
    /** A new key of the tenant and the URL to PUT it to (POST /api-upload-url). */
    uploadUrl: (tenantId: string, contentType: ImageType, maxBytes: number) => {
      const key = storageKey(tenantId, randomUUID(), contentType)
      const expires = expiry()
      return { key, url: urlOf({ method: "PUT", key, contentType, maxBytes, expires }), expires_at: new Date(expires).toISOString() }
    },
    /** A URL to GET the file of `key`. */
    downloadUrl: (key: string) => {
      const expires = expiry()
      return { url: urlOf({ method: "GET", key, contentType: "", maxBytes: 0, expires }), url_expires_at: new Date(expires).toISOString() }
    },
    /** PUT and GET of a signed URL: `<base>/storage/<key>?…&signature=…`. */
    serve: Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const [pathname, search = ""] = request.url.split("?", 2) as [string, string?]
      const key = pathname.slice(pathname.indexOf(STORAGE_PATH) + STORAGE_PATH.length)
      const path = pathOf(key)
      if (path === undefined) return fail(404, "NOT_FOUND", "No such file")
      const method = request.method
      if (method !== "PUT" && method !== "GET") return fail(405, "METHOD_NOT_ALLOWED", "Signed storage URLs take PUT (upload) or GET (download)")
      const q = new URLSearchParams(search)
      const expires = Number(q.get("expires"))
      const contentType = method === "PUT" ? q.get("content_type") ?? "" : ""
      const maxBytes = method === "PUT" ? Number(q.get("max_bytes")) : 0
      const given = Buffer.from(q.get("signature") ?? "", "hex")
      const expected = Buffer.from(signature({ method, key, contentType, maxBytes, expires }), "hex")
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return fail(403, "FORBIDDEN", "The URL's signature does not match it (it was changed, or is for another method)")
      }
      if (!Number.isFinite(expires) || expires < Date.now()) return fail(403, "FORBIDDEN", "The URL has expired; ask for a new one")
      if (method === "GET") {
        // an image attached before files were sealed has its upload only
        const bytes = yield* Effect.promise(() =>
          readFile(sealedOf(path)).catch(() => readFile(path)).then((b) => new Uint8Array(b)).catch(() => undefined)
        )
        if (bytes === undefined) return fail(404, "NOT_FOUND", "No such file")
        return HttpServerResponse.uint8Array(bytes, {
          contentType: typeOfKey(key)!,
          headers: { "cache-control": "private, max-age=300", "access-control-allow-origin": "*" }
        })
      }
      if (yield* Effect.promise(() => stat(sealedOf(path)).then(() => true, () => false))) {
        return fail(409, "CONFLICT", "This upload is attached to a part image already and stays as it was; ask POST /api-upload-url for a new URL")
      }
      if ((request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() !== contentType) {
        return fail(415, "UNSUPPORTED_MEDIA_TYPE", `This URL takes Content-Type ${contentType} only`)
      }
      const declared = Number(request.headers["content-length"] ?? "0")
      if (declared > maxBytes) return fail(413, "PAYLOAD_TOO_LARGE", `The file exceeds the ${maxBytes} bytes this URL allows`)
      // read up to the limit; a body that goes past it is refused before anything is written
      const chunks: Array<Uint8Array> = []
      let size = 0
      const read = yield* request.stream.pipe(
        Stream.runForEach((chunk) => {
          size += chunk.length
          if (size > maxBytes) return Effect.fail("tooLarge" as const)
          chunks.push(chunk)
          return Effect.void
        }),
        Effect.as("ok" as const),
        Effect.catch((e) => Effect.succeed(e === "tooLarge" ? "tooLarge" as const : "broken" as const))
      )
      if (read === "tooLarge") return fail(413, "PAYLOAD_TOO_LARGE", `The file exceeds the ${maxBytes} bytes this URL allows`)
      if (read === "broken") return fail(400, "BAD_REQUEST", "The upload was cut off")
      const body = Buffer.concat(chunks)
      if (body.length === 0 || !MAGIC[contentType as ImageType](body)) {
        return fail(415, "UNSUPPORTED_MEDIA_TYPE", `The file is not a ${contentType} image`)
      }
      // written whole under a temporary name, then renamed: a file is never seen half-written, and one that could
      // not be written leaves nothing behind (the failure is the server's 500)
      yield* Effect.promise(async () => {
        makeDirectory(dirname(path), 0o700)
        const temporary = `${path}.${randomUUID()}.part`
        try {
          await writeFile(temporary, body, { mode: 0o600 })
          await rename(temporary, path)
        } catch (e) {
          await rm(temporary, { force: true })
          throw e
        }
      })
      return HttpServerResponse.jsonUnsafe({ success: true, data: { key, size_bytes: body.length, content_type: contentType } }, {
        status: 201,
        headers: { "access-control-allow-origin": "*" }
      })
    })
  }
}

export type LocalDiskStorage = ReturnType<typeof localDiskStorage>
