import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AnyEnvironment } from "../src/core/index.ts";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { startServer } from "../src/server/start-server.ts";

describe("toolgym serve at startup", () => {
  it("builds each environment's catalog entry before it listens, so GET /envs starts no task", async () => {
    let starts = 0;
    // The mock environment, counting the episodes started from it (the catalog starts one per environment).
    const counted = Object.create(mockEnvironment) as AnyEnvironment;
    counted.start = (...args: Parameters<AnyEnvironment["start"]>) => (starts++, mockEnvironment.start(...args));
    const server = await startServer({ environments: { mock: counted }, port: 0 });
    try {
      assert.equal(starts, 1, "the catalog entry was built before startServer resolved");
      const response = await fetch(`${server.url}/envs`);
      const body = (await response.json()) as { environments: Array<{ id: string; tools: Array<{ function: { name: string } }> }> };
      assert.deepEqual(
        body.environments.map((entry) => [entry.id, entry.tools.map((tool) => tool.function.name)]),
        [["mock", ["lookup", "finish"]]],
      );
      assert.equal(starts, 1, "GET /envs answered from the entry built at startup");
    } finally {
      await server.close();
    }
  });
});
