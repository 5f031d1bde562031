import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Episode } from "../../core/index.ts";
import { EpisodeDriver } from "../../rollout/episode-driver.ts";
import { musiqueEnvironment, type MultihopTask } from "./index.ts";

function task(overrides: Partial<MultihopTask> = {}): MultihopTask {
  const config = musiqueEnvironment.configSchema.parse({ mode: "search" });
  return { ...musiqueEnvironment.generate({ split: "dev", seed: 0, index: 0, config }), ...overrides };
}

/** An episode behind the episode driver, which looks every call's tool up and checks its arguments. */
function driven(overrides: Partial<MultihopTask> = {}): EpisodeDriver {
  const config = musiqueEnvironment.configSchema.parse({ mode: "search" });
  return new EpisodeDriver({ env: musiqueEnvironment, split: "dev", seed: 0, index: 0, config, task: task(overrides) });
}

function error(result: { content: string; isError: boolean; errorKind?: string }): { kind: string | undefined; message: string } {
  assert.equal(result.isError, true);
  return { kind: result.errorKind, message: (JSON.parse(result.content) as { error: string }).error };
}

function counts(episode: Episode): { searches: unknown; reads: unknown; answer: unknown } {
  const diagnostics = episode.diagnostics?.() as Record<string, unknown>;
  return { searches: diagnostics.searches, reads: diagnostics.reads, answer: diagnostics.answer };
}

// The schemas as the hand-written JSON Schemas had them before the tools moved to zod: the model's prompt
// must not change with the refactor.
const SEARCH = {
  type: "object",
  properties: {
    query: { type: "string", description: "Keywords: the entity and the fact you are looking for." },
    limit: { type: "integer", minimum: 1, maximum: 10, description: "Number of hits (default 5)." },
  },
  required: ["query"],
  additionalProperties: false,
};
const READ = {
  type: "object",
  properties: {
    title: { type: "string", description: "A paragraph title from the search results." },
    offset: { type: "integer", minimum: 0, description: "Skip this many paragraphs (default 0)." },
  },
  required: ["title"],
  additionalProperties: false,
};

describe("multihop tools (zod toolbox)", () => {
  it("publish the same JSON Schemas, byte for byte, as the hand-written ones", () => {
    const answering = musiqueEnvironment.start(task()).tools.map((tool) => tool.function.parameters);
    assert.equal(
      JSON.stringify(answering),
      JSON.stringify([
        SEARCH,
        READ,
        {
          type: "object",
          properties: { answer: { type: "string", description: "The answer as a short phrase." } },
          required: ["answer"],
          additionalProperties: false,
        },
      ]),
    );
    const abstaining = musiqueEnvironment.start(task({ full: true })).tools.map((tool) => tool.function.parameters);
    assert.equal(
      JSON.stringify(abstaining[2]),
      JSON.stringify({
        type: "object",
        properties: {
          answer: { type: "string", description: "The answer as a short phrase (may be omitted when answerable is false)." },
          answerable: { type: "boolean", description: "false: the paragraphs cannot answer this question. Default true." },
        },
        additionalProperties: false,
      }),
    );
  });

  it("refuse bad arguments with one readable invalid_arguments error and change nothing", () => {
    const driver = driven();
    const cases: Array<[string, unknown, string]> = [
      ["search", { query: "  " }, `search: argument 'query': needs some keywords, got the string "  "`],
      ["search", {}, "search: missing required argument 'query'"],
      ["search", { query: "Stanley", limit: 11 }, "search: argument 'limit': Too big: expected number to be <=10, got the number 11"],
      ["search", { query: "Stanley", limit: 2.5 }, "search: argument 'limit': expected int, got the number 2.5"],
      ["search", { query: "Stanley", top: 3 }, "search: unexpected argument 'top'"],
      ["read", { title: "Stanley", offset: -1 }, "read: argument 'offset': Too small: expected number to be >=0, got the number -1"],
      ["read", null, "read: missing required argument 'title'"],
      ["finish", { answer: 7 }, "finish: argument 'answer': expected string, got the number 7"],
    ];
    const call = (name: string, args: unknown) => driver.call({ name, arguments: args });
    for (const [name, args, message] of cases) assert.deepEqual(error(call(name, args)), { kind: "invalid_arguments", message }, JSON.stringify(args));
    assert.deepEqual(error(call("lookup", { key: "x" })), {
      kind: "unknown_tool",
      message: "unknown tool 'lookup'; available tools: search, read, finish",
    });
    assert.deepEqual(error(call("finish", ["Stanley"])), {
      kind: "invalid_json_arguments",
      message: "tool arguments must be a JSON object, got an array. Send the arguments as one JSON object matching the tool's schema.",
    });
    assert.deepEqual(
      driver.formatErrors.map((problem) => problem.kind),
      [...cases.map(() => "invalid_arguments"), "unknown_tool", "invalid_json_arguments"],
    );
    assert.deepEqual(counts(driver.episode), { searches: 0, reads: 0, answer: null });
    assert.equal(driver.done, false);
  });

  it("default the search limit to the task's top_k and the read offset to 0", () => {
    const episode = musiqueEnvironment.start(task({ topK: 2 }));
    const hits = JSON.parse(episode.call("search", { query: "Mountrail County courthouse Stanley" }).content) as { hits: unknown[] };
    assert.equal(hits.hits.length, 2);
    const read = JSON.parse(episode.call("read", { title: "Mountrail County Courthouse" }).content) as { offset: number; total: number };
    assert.deepEqual({ offset: read.offset, total: read.total }, { offset: 0, total: 1 });
    assert.deepEqual(counts(episode), { searches: 1, reads: 1, answer: null });
  });

  it("finish ends the episode; later calls are refused", () => {
    const episode = musiqueEnvironment.start(task());
    assert.deepEqual(episode.call("finish", { answer: "Stanley" }), { content: '{"ok":true}', isError: false, done: true });
    assert.equal(episode.done, true);
    assert.equal(error(episode.call("search", { query: "Stanley" })).kind, "after_finish");
    assert.deepEqual(counts(episode), { searches: 0, reads: 0, answer: "Stanley" });
  });

  it("MuSiQue-Full's finish takes an answer or answerable: false, and neither is an error", () => {
    const abstains = musiqueEnvironment.start(task({ full: true }));
    assert.equal(abstains.call("finish", { answerable: false }).done, true);
    assert.equal(abstains.diagnostics?.().predicted_answerable, false);
    const answers = musiqueEnvironment.start(task({ full: true }));
    assert.equal(answers.call("finish", { answer: "Stanley" }).done, true);
    assert.equal(answers.diagnostics?.().predicted_answerable, true);
    const neither = driven({ full: true });
    assert.deepEqual(error(neither.call({ name: "finish", arguments: {} })), {
      kind: "invalid_arguments",
      message: "finish needs {answer: string}, or {answerable: false} when the paragraphs cannot answer the question",
    });
    assert.deepEqual(error(neither.call({ name: "finish", arguments: { answer: "Stanley", answerable: "no" } })), {
      kind: "invalid_arguments",
      message: "finish: argument 'answerable': expected boolean, got the string \"no\"",
    });
    // The first is the tool's own rule across two arguments, the second the driver's schema check: each counted once.
    assert.equal(neither.formatErrors.length, 2);
    assert.equal(neither.done, false);
  });
});
