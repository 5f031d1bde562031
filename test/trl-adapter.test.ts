import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { qwen3TokenizerDir, requirePython } from "./support/qwen3.ts";

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Type lists are sets in JSON Schema: compare them sorted (transformers sorts union members). */
function sortTypes(properties: Json): Json {
  return Object.fromEntries(
    Object.entries(properties ?? {}).map(([name, schema]) => [name, Array.isArray(schema.type) ? { ...schema, type: [...schema.type].sort() } : schema]),
  );
}

/**
 * The server's schema minus what a Python signature cannot express: `additionalProperties: false`,
 * numeric bounds (`minimum`/`maximum`), pydantic's `title`s and `default`s (tau2's schemas carry them),
 * and line breaks inside an argument's description (TRL reads it from a docstring and joins the lines).
 * These are the only differences allowed.
 */
function expressible(schema: Json): Json {
  const { title: _title, ...parameters } = { ...schema.function.parameters };
  if (parameters.additionalProperties === false) delete parameters.additionalProperties;
  parameters.properties = sortTypes(
    Object.fromEntries(
      Object.entries(parameters.properties ?? {}).map(([name, property]) => {
        const { minimum: _minimum, maximum: _maximum, title: _propertyTitle, default: _default, ...rest } = property as Json;
        if (typeof rest.description === "string") rest.description = rest.description.replace(/\s*\n\s*/g, " ");
        return [name, rest];
      }),
    ),
  );
  if (Array.isArray(parameters.required)) parameters.required = [...parameters.required].sort();
  if (parameters.required?.length === 0) delete parameters.required;
  return { type: "function", function: { ...schema.function, parameters } };
}

function sortedRequired(schema: Json): Json {
  const parameters = { ...schema.function.parameters, properties: sortTypes(schema.function.parameters.properties) };
  if (Array.isArray(parameters.required)) parameters.required = [...parameters.required].sort();
  return { type: "function", function: { ...schema.function, parameters } };
}

describe("toolgym_trl adapter against toolgym serve", () => {
  let server: RunningServer;
  let report: Json;
  before(async () => {
    server = await startServer({ environments: ENVIRONMENTS, port: 0, token: "tkn" });
    // Asynchronous: the server runs in this process and must keep answering while Python talks to it.
    const result = await promisify(execFile)(
      requirePython(),
      [resolve(import.meta.dirname, "../python/tests/check_adapter.py"), server.url, "tkn", qwen3TokenizerDir()],
      {
        encoding: "utf8",
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1" },
        timeout: 180_000,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    report = JSON.parse(result.stdout.trim().split("\n").at(-1) as string);
  });
  after(async () => {
    await server.close();
  });

  it("the adapter imports nothing beyond the standard library", () => {
    assert.deepEqual(report.non_stdlib_imports, []);
  });

  it("tool schemas as TRL extracts them equal the server's JSON schemas, for every registered environment", () => {
    assert.deepEqual(Object.keys(report.environments).sort(), Object.keys(ENVIRONMENTS).sort());
    for (const [id, entry] of Object.entries(report.environments as Record<string, Json>)) {
      const server = (entry.server as Json[]).map(expressible).sort((a, b) => a.function.name.localeCompare(b.function.name));
      const trl = (entry.trl as Json[]).map(sortedRequired).sort((a, b) => a.function.name.localeCompare(b.function.name));
      assert.deepEqual(trl, server, `${id}: generated method schemas differ from the server's`);
    }
    assert.equal(report.environments.mock.class, "ToolgymMock");
  });

  it("GRPO prompts render each environment's own tool schemas, in its order, as evals and SFT rows do", () => {
    for (const [id, entry] of Object.entries(report.environments as Record<string, Json>)) {
      assert.deepEqual(entry.environment_schemas, entry.server, `${id}: environment_schemas must give back the server's schemas in order`);
      assert.equal(entry.rendered_wrapped_equals_server, true, `${id}: the wrapped tokenizer renders another tools block`);
    }
    // Why the wrapper exists: TRL's own rendering (alphabetical methods, schemas rebuilt without bounds) differs.
    const searchPlan = report.environments.search_plan_act;
    assert.deepEqual(searchPlan.method_order, ["finish", "link_records", "read_record", "search", "update_record"]);
    assert.deepEqual(
      searchPlan.server.map((tool: Json) => tool.function.name),
      ["search", "read_record", "update_record", "link_records", "finish"],
    );
    assert.equal(searchPlan.rendered_plain_equals_server, false);
  });

  it("drives an episode: reset(**row) → tools → get_reward with the breakdown exposed", () => {
    const episode = report.episode;
    assert.equal(episode.observation, null, "a row whose prompt is its task's prompt: reset adds nothing");
    assert.match(episode.without_prompt, /What is the value of key/);
  });

  it("reset returns the task for an empty prompt and refuses a row that carries another task or version", () => {
    const { resets, without_prompt: task } = report.episode;
    assert.equal(resets.empty_prompt.returned, task, "TRL appends the task text to the empty prompt");
    assert.match(resets.other_task_prompt.error, /the dataset row's prompt is not the prompt of its task \(mock split='train' seed=4 index=2\)/);
    assert.match(resets.other_task_prompt.error, /regenerate it with `toolgym dataset mock`/);
    assert.match(resets.old_env_version.error, /written by mock version 0\.0\.0-old but the server runs version \S+; regenerate/);
    assert.match(resets.wrong_prompt_hash.error, /another task than the one the server now builds from it \(prompt_hash differs\)/);
    assert.deepEqual(resets.matching_hash, { returned: null });
  });

  it("finishes the episode and exposes the reward breakdown", () => {
    const episode = report.episode;
    assert.deepEqual(episode.finished, { ok: true });
    assert.equal(episode.reward, 1);
    assert.deepEqual(episode.breakdown.components, { outcome: 1, stop: 1 });
    assert.equal(episode.breakdown.ended_by, "finished");
    assert.match(episode.errors.unreachable, /cannot reach the toolgym server at http:\/\/127\.0\.0\.1:9.*toolgym serve/);
    assert.equal(episode.errors.bad_token, "UNAUTHORIZED");
    assert.equal(episode.errors.bad_split, "SPLIT_UNKNOWN");
    assert.ok(server.store.counters.byEnv.mock!.toolCalls >= 2);
  });

  it("passes the factory's max_turns: a call past it is not run and the episode scores as max_turns", () => {
    const { turn_limit: limited } = report.episode;
    assert.match(limited.late.error, /reached its limit of 1 turns; this call was not executed/);
    assert.equal(limited.done, true);
    assert.equal(limited.reward, 0);
    assert.equal(limited.ended_by, "max_turns");
  });
});
