// Resources: standard CRUD (spec 4.12); sync by external key is Sync.resource.
import * as Context from "effect/Context"
import { type Crud, type CrudStore, crudLayer } from "../crud.ts"
import { Resource, ResourceCreate, resourceListSpec, ResourcePatch } from "./schema.ts"

export class ResourceStore extends Context.Service<ResourceStore, CrudStore<Resource>>()("mes/domain/ResourceStore") {}

export class Resources extends Context.Service<Resources, Crud<Resource>>()("mes/domain/Resources") {
  static readonly layer = crudLayer(Resources, ResourceStore, {
    entity: "resource",
    table: "resources",
    create: ResourceCreate,
    record: Resource,
    patch: ResourcePatch,
    listSpec: resourceListSpec
  })
}
