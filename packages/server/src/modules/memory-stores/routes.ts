import { Type } from "typebox";
import type { HttpApp } from "../../platform/http/app.js";
import { pageOf, sortValue, toPage, DEFAULT_PAGE_SIZE } from "../../platform/http/lists.js";
import { pathId, projectPath } from "../../platform/http/params.js";
import { errorResponses, Page } from "../../platform/http/schemas.js";
import { cutPage, decodeMemoryCursor, decodeVersionCursor, encodeMemoryCursor, encodeVersionCursor } from "./cursors.js";
import { ProjectParams } from "../orgs/schemas.js";
import * as s from "./schemas.js";
import type { MemoryStoreService } from "./service.js";
import { memoryStoreView, memoryVersionView, memoryVersionWithContentView, memoryView, memoryWithContentView } from "./views.js";

const BASE = "/orgs/:orgID/projects/:projectID/memory-stores";

export function memoryStoreRoutes(app: HttpApp, deps: { memoryStores: MemoryStoreService }) {
  const { memoryStores } = deps;

  app.get(
    BASE,
    {
      schema: {
        tags: [s.TAG],
        operationId: "listMemoryStores",
        summary: "List memory stores",
        description: "The project's memory stores (agent.read); by default created_at descending, then id descending.",
        params: ProjectParams,
        querystring: s.ListMemoryStoresQuery,
        response: { 200: Page(s.MemoryStore), ...errorResponses() },
      },
    },
    async (request) => {
      const page = pageOf(request.query);
      const rows = await memoryStores.listStores(request.principal!, ...projectPath(request.params), { name: request.query.name, page });
      return toPage(rows, page.limit, page.sort, (r) => ({ value: sortValue(page.sort, r), id: r.id }), memoryStoreView);
    },
  );

  app.post(
    BASE,
    {
      schema: {
        tags: [s.TAG],
        operationId: "createMemoryStore",
        summary: "Create a memory store",
        description: "Creates an empty store (project.manage); names are unique in the project (409).",
        params: ProjectParams,
        body: s.CreateMemoryStoreRequest,
        response: { 201: s.MemoryStore, ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      const row = await memoryStores.createStore(request.principal!, ...projectPath(request.params), request.body);
      return reply.status(201).send(memoryStoreView(row));
    },
  );

  app.get(
    `${BASE}/:memoryStoreID`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "getMemoryStore",
        summary: "Get a memory store",
        description: "One store of the project with its file count and size (agent.read).",
        params: s.MemoryStoreParams,
        response: { 200: s.MemoryStore, ...errorResponses() },
      },
    },
    async (request) => memoryStoreView(await memoryStores.getStore(request.principal!, ...storePath(request.params))),
  );

  app.patch(
    `${BASE}/:memoryStoreID`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "updateMemoryStore",
        summary: "Update a memory store",
        description: "Changes the store's description, writable flag or metadata (project.manage).",
        params: s.MemoryStoreParams,
        body: s.UpdateMemoryStoreRequest,
        response: { 200: s.MemoryStore, ...errorResponses() },
      },
    },
    async (request) => memoryStoreView(await memoryStores.updateStore(request.principal!, ...storePath(request.params), request.body)),
  );

  app.delete(
    `${BASE}/:memoryStoreID`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteMemoryStore",
        summary: "Delete a memory store",
        description: "Deletes the store with all its files and their versions (project.manage).",
        params: s.MemoryStoreParams,
        response: { 204: Type.Null(), ...errorResponses() },
      },
    },
    async (request, reply) => {
      await memoryStores.deleteStore(request.principal!, ...storePath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${BASE}/:memoryStoreID/memories`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "listMemories",
        summary: "List or search memories",
        description:
          "The store's files without their content (agent.read), by path in code point order. With q, only files whose path or " +
          "content match it (PostgreSQL text search, web search syntax, no stemming), best match first. path_prefix keeps paths " +
          "that start with it.",
        params: s.MemoryStoreParams,
        querystring: s.ListMemoriesQuery,
        response: { 200: Page(s.Memory), ...errorResponses() },
      },
    },
    async (request) => {
      const { q, path_prefix: pathPrefix, cursor } = request.query;
      const searching = q !== undefined;
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE;
      const after = decodeMemoryCursor(cursor, searching);
      const rows = await memoryStores.listMemories(request.principal!, ...storePath(request.params), { q, pathPrefix, after, limit });
      const { page, last } = cutPage(rows, limit);
      return { data: page.map(memoryView), next_cursor: last ? encodeMemoryCursor(last, searching) : null };
    },
  );

  app.put(
    `${BASE}/:memoryStoreID/memories`,
    {
      bodyLimit: s.PUT_MEMORY_BODY_LIMIT,
      schema: {
        tags: [s.TAG],
        operationId: "putMemory",
        summary: "Create or replace a memory",
        description:
          "Writes the file at path as its next version (project.manage): 201 when the path held no file, 200 when it replaced " +
          "one (or already held this content, which adds no version). With expected_digest, the file's current digest must " +
          "match, else 409 file_content_conflict with current_digest and nothing changes. A store that is not writable " +
          "answers 409 file_read_only; content over 10 MiB, 413.",
        params: s.MemoryStoreParams,
        body: s.PutMemoryRequest,
        response: { 200: s.Memory, 201: s.Memory, ...errorResponses(409, 413) },
      },
    },
    async (request, reply) => {
      const { path, content, expected_digest: expectedDigest } = request.body;
      const result = await memoryStores.putMemory(request.principal!, ...storePath(request.params), { path, content, expectedDigest });
      return reply.status(result.created ? 201 : 200).send(memoryView(result.memory));
    },
  );

  app.get(
    `${BASE}/:memoryStoreID/memories/:memoryID`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "getMemory",
        summary: "Get a memory",
        description: "One file of the store with its content (agent.read); a deleted file is 404.",
        params: s.MemoryParams,
        response: { 200: s.MemoryWithContent, ...errorResponses() },
      },
    },
    async (request) => memoryWithContentView(await memoryStores.getMemory(request.principal!, ...memoryPath(request.params))),
  );

  app.delete(
    `${BASE}/:memoryStoreID/memories/:memoryID`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "deleteMemory",
        summary: "Delete a memory",
        description:
          "Deletes the file as its next version (project.manage); its versions stay readable and writing its path again " +
          "continues them. A store that is not writable answers 409 file_read_only.",
        params: s.MemoryParams,
        response: { 204: Type.Null(), ...errorResponses(409) },
      },
    },
    async (request, reply) => {
      await memoryStores.deleteMemory(request.principal!, ...memoryPath(request.params));
      return reply.status(204).send(null);
    },
  );

  app.get(
    `${BASE}/:memoryStoreID/memories/:memoryID/versions`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "listMemoryVersions",
        summary: "List a memory's versions",
        description: "Every write and delete of the file, newest first, without content (agent.read); also for a deleted file.",
        params: s.MemoryParams,
        querystring: s.ListMemoryVersionsQuery,
        response: { 200: Page(s.MemoryVersion), ...errorResponses() },
      },
    },
    async (request) => {
      const limit = request.query.limit ?? DEFAULT_PAGE_SIZE;
      const beforeVersion = decodeVersionCursor(request.query.cursor);
      const rows = await memoryStores.listVersions(request.principal!, ...memoryPath(request.params), { beforeVersion, limit });
      const { page, last } = cutPage(rows, limit);
      return { data: page.map(memoryVersionView), next_cursor: last ? encodeVersionCursor(last.version) : null };
    },
  );

  app.get(
    `${BASE}/:memoryStoreID/memories/:memoryID/versions/:version`,
    {
      schema: {
        tags: [s.TAG],
        operationId: "getMemoryVersion",
        summary: "Get a memory version",
        description: "One version of the file with the content it wrote; null content for a delete (agent.read).",
        params: s.MemoryVersionParams,
        response: { 200: s.MemoryVersionWithContent, ...errorResponses() },
      },
    },
    async (request) =>
      memoryVersionWithContentView(
        await memoryStores.getVersion(request.principal!, ...memoryPath(request.params), request.params.version),
      ),
  );
}

function storePath(params: { orgID: string; projectID: string; memoryStoreID: string }): [string, string, string] {
  return [...projectPath(params), pathId("memoryStore", params.memoryStoreID)];
}

function memoryPath(params: { orgID: string; projectID: string; memoryStoreID: string; memoryID: string }): [string, string, string, string] {
  return [...storePath(params), pathId("memory", params.memoryID)];
}
