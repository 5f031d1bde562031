import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { GARBAGE_CALLS } from "./policies/pilots.ts";
import { createScriptedAgent, type ScriptedDecision } from "../_kit/scripted.ts";
import { resultFromTrajectory } from "../../runs/record.ts";
import { EpisodeDriver } from "../../rollout/episode-driver.ts";
import { runEpisode } from "../../rollout/run-episode.ts";
import type { Episode } from "../../core/index.ts";
import type { SearchPlanEpisode } from "./episode.ts";
import { searchPlanActEnvironment as env } from "./index.ts";
import { runSolver } from "./solver.ts";
import type { SearchPlanTask } from "./task.ts";
import { themeByName } from "./themes.ts";

const config = env.configSchema.parse({});

function findTask(predicate: (task: SearchPlanTask) => boolean): SearchPlanTask {
  for (let index = 0; index < 500; index++) {
    const task = env.generate({ split: "eval", seed: 5, index, config });
    if (predicate(task)) return task;
  }
  throw new Error("no matching task in 500");
}

const parse = (content: string) => JSON.parse(content) as Record<string, unknown>;
const finished = { turnsUsed: 5, maxTurns: 30, endedBy: "finished" as const };

describe("search_plan tools", () => {
  it("answers every format_garbage call with a readable error result and keeps the episode open", async () => {
    const task = findTask(() => true);
    let position = 0;
    const agent = createScriptedAgent("garbage", () => ({ calls: [GARBAGE_CALLS[position++ % GARBAGE_CALLS.length] as never] }));
    const trajectory = await runEpisode({ env, split: "eval", seed: 5, index: 0, config, agent, task, maxTurns: GARBAGE_CALLS.length });
    assert.equal(trajectory.steps.length, GARBAGE_CALLS.length);
    for (const step of trajectory.steps) {
      assert.equal(step.isError, true, `${step.name} ${JSON.stringify(step.arguments)} should be an error`);
      const body = parse(step.result);
      assert.equal(body.ok, false);
      assert.ok(typeof body.error === "string" && (body.error as string).length > 15, `unreadable error: ${step.result}`);
    }
    assert.equal(trajectory.termination, "max_turns");
    assert.ok(trajectory.formatErrors.count >= GARBAGE_CALLS.length - 3);
    assert.equal(trajectory.reward?.total, 0);
  });

  /** The first record's type, and its editable enum, number and read-only code fields (when it has them). */
  function firstRecordFields(task: SearchPlanTask) {
    const record = task.records[0] as SearchPlanTask["records"][number];
    const type = themeByName(task.theme)?.types.find((spec) => spec.name === record.type);
    return {
      record,
      enumField: type?.fields.find((field) => field.kind === "enum" && !field.readOnly),
      numberField: type?.fields.find((field) => field.kind === "integer" || field.kind === "money"),
      codeField: type?.fields.find((field) => field.code),
    };
  }

  it("gives a stable error kind for each bad call", () => {
    // an update task whose first record has every kind of field the checks below need
    const task = findTask((candidate) => {
      const fields = firstRecordFields(candidate);
      return candidate.family === "update" && fields.enumField !== undefined && fields.numberField !== undefined && fields.codeField !== undefined;
    });
    // Through the episode driver, which looks each tool up and checks its arguments before the episode runs it.
    const driver = new EpisodeDriver({ env, split: "eval", seed: 5, index: 0, config, task });
    const episode = driver.episode as SearchPlanEpisode;
    const theme = themeByName(task.theme);
    const { record, enumField, numberField, codeField } = firstRecordFields(task);
    const kind = (name: string, args: unknown) => driver.call({ name, arguments: args }).errorKind;
    assert.equal(kind("teleport", {}), "unknown_tool");
    assert.equal(kind("search", { query: "x", limit: 11 }), "invalid_arguments");
    assert.equal(kind("search", { query: "x", type: "dragon" }), "unknown_type");
    assert.equal(kind("read_record", { id: "ZZZ-0000" }), "unknown_id");
    assert.equal(kind("update_record", { id: record.id, field: "colour", value: "red" }), "unknown_field");
    assert.equal(kind("update_record", { id: record.id, field: enumField?.name, value: "not_a_value" }), "enum_violation");
    assert.equal(kind("update_record", { id: record.id, field: numberField?.name, value: "lots" }), "wrong_type");
    assert.equal(kind("update_record", { id: record.id, field: codeField?.name, value: "X-1" }), "read_only_field");
    const structural = theme?.relations.find((relation) => relation.functional && relation.from === record.type);
    const target = task.records.find((candidate) => candidate.type === structural?.to && candidate.id !== record.id) as SearchPlanTask["records"][number];
    assert.equal(kind("link_records", { source_id: record.id, relation: structural?.name, target_id: target.id }), "relation_not_allowed");
    const linkable = theme?.relations.find((relation) => !relation.functional) as NonNullable<typeof theme>["relations"][number];
    const source = task.records.find((candidate) => candidate.type === linkable.from) as SearchPlanTask["records"][number];
    const other = task.records.find(
      (candidate) => candidate.type === linkable.to && candidate.id !== source.id && !source.links.some((link) => link.target === candidate.id),
    ) as SearchPlanTask["records"][number];
    assert.equal(driver.call({ name: "link_records", arguments: { source_id: source.id, relation: linkable.name, target_id: other.id } }).isError, false);
    assert.equal(kind("link_records", { source_id: source.id, relation: linkable.name, target_id: other.id }), "duplicate_link");
    assert.equal(driver.done, false);
    // The two refused calls are the only format errors, each counted once; they still cost against the call budget.
    assert.deepEqual(
      driver.formatErrors.map((error) => error.kind),
      ["unknown_tool", "invalid_arguments"],
    );
    assert.equal(episode.ledger.calls, 11);
    assert.deepEqual(episode.ledger.callsByName.teleport, 1);
  });

  it("puts exact name matches first and pages with offset", () => {
    const firstWord = (task: SearchPlanTask) => (task.records[7] as SearchPlanTask["records"][number]).name.split(" ")[0] as string;
    // a task whose 8th record's first name word is shared by another record, so the search has a second page
    const task = findTask((candidate) => candidate.records.filter((record) => record.name.split(" ").includes(firstWord(candidate))).length > 1);
    const episode = env.start(task);
    const record = task.records[7] as SearchPlanTask["records"][number];
    const first = parse(episode.call("search", { query: record.name }).content) as { hits: Array<{ id: string }> };
    assert.equal(first.hits[0]?.id, record.id);
    const page = parse(episode.call("search", { query: firstWord(task), limit: 1 }).content) as { hits: unknown[]; total: number; next_offset?: number };
    assert.equal(page.hits.length, 1);
    assert.ok(page.total > 1, `'${firstWord(task)}' matches ${page.total} record(s)`);
    assert.equal(page.next_offset, 1);
    const second = parse(episode.call("search", { query: firstWord(task), limit: 1, offset: 1 }).content) as { hits: Array<{ id: string }> };
    assert.equal(second.hits.length, 1);
    assert.deepEqual(parse(episode.call("search", { query: "qqqzzzxxx" }).content), { hits: [], note: "no records match" });
  });
});

describe("search_plan episodes of one task", () => {
  type Hits = { hits: Array<{ id: string; snippet: string }> };
  const stringFieldTask = () =>
    findTask((candidate) => {
      const record = candidate.records[3] as SearchPlanTask["records"][number];
      return (
        themeByName(candidate.theme)
          ?.types.find((type) => type.name === record.type)
          ?.fields.some((field) => field.kind === "string" && !field.code && !field.readOnly) ?? false
      );
    });

  const searchIds = (episode: Episode, query: string) => (parse(episode.call("search", { query }).content) as Hits).hits.map((hit) => hit.id);

  it("share what they read of the task, and a change in one is seen only by that one", () => {
    const task = stringFieldTask();
    const json = JSON.stringify(task);
    const record = task.records[3] as SearchPlanTask["records"][number];
    const field = themeByName(task.theme)
      ?.types.find((type) => type.name === record.type)
      ?.fields.find((candidate) => candidate.kind === "string" && !candidate.code && !candidate.readOnly) as { name: string };
    const changer = env.start(task);
    const watcher = env.start(task);
    // Both search first (the index of the initial records), then one changes the record and searches again.
    assert.deepEqual(searchIds(changer, "Quorrendale"), []);
    assert.deepEqual(searchIds(watcher, "Quorrendale"), []);
    assert.equal(changer.call("update_record", { id: record.id, field: field.name, value: "Quorrendale" }).isError, false);
    assert.deepEqual(searchIds(changer, "Quorrendale"), [record.id]);
    assert.match(changer.call("read_record", { id: record.id }).content, /Quorrendale/);
    // The other episode changes another record of the type: its index re-reads that one, not the first change.
    const other = task.records.find((candidate) => candidate !== record && candidate.type === record.type) as SearchPlanTask["records"][number];
    assert.equal(watcher.call("update_record", { id: other.id, field: field.name, value: "Marrowvale" }).isError, false);
    assert.deepEqual(searchIds(watcher, "Marrowvale"), [other.id]);
    // That episode, and a third started after both changes, still see the first record as generated.
    for (const episode of [watcher, env.start(task)]) {
      assert.deepEqual(searchIds(episode, "Quorrendale"), []);
      assert.doesNotMatch(episode.call("read_record", { id: record.id }).content, /Quorrendale/);
    }
    assert.deepEqual(searchIds(env.start(task), "Marrowvale"), []);
    // Nothing the episodes kept shows in the task's JSON.
    assert.equal(JSON.stringify(task), json);
  });

  it("search a copy of the task with other records over those records", () => {
    const task = stringFieldTask();
    const record = task.records[3] as SearchPlanTask["records"][number];
    assert.equal(searchIds(env.start(task), record.name)[0], record.id);
    const renamed = { ...task, records: task.records.map((candidate) => (candidate === record ? { ...candidate, name: "Quorren Vashtal" } : candidate)) };
    assert.equal(searchIds(env.start(renamed), "Quorren Vashtal")[0], record.id);
    assert.deepEqual(searchIds(env.start(task), "Quorren Vashtal"), []);
    // The same task object given other records (after its episodes searched the old ones).
    task.records = renamed.records;
    assert.equal(searchIds(env.start(task), "Quorren Vashtal")[0], record.id);
  });
});

describe("search_plan reward", () => {
  const lookup = findTask((task) => task.family === "lookup" && task.answer !== null && task.answer.length > 3);

  function solvedEpisode(task: SearchPlanTask, keepFinish: boolean): SearchPlanEpisode {
    const episode = env.start(task) as SearchPlanEpisode;
    const calls = runSolver(task, (name, args) =>
      name === "finish" && !keepFinish ? { content: "{}", isError: false, done: true } : episode.call(name, args),
    );
    assert.ok(calls.length > 1);
    return episode;
  }

  it("scores the oracle 1", () => {
    const reward = solvedEpisode(lookup, true).reward(finished);
    assert.deepEqual(reward.components, { outcome: 1, grounding: 1, stop: 1 });
    assert.equal(reward.total, 1);
    for (const key of ["turns", "toolCallsByName", "formatErrors", "collateralMutations", "ungroundedReferences"]) assert.ok(key in reward.diagnostics, key);
  });

  it("counts each format error once, in the driver's ledger: the reward and the results row's format_errors agree", async () => {
    const plan = runSolver(lookup, (name, args) => (env.start(lookup) as SearchPlanEpisode).call(name, args)).map((call) => ({
      name: call.name,
      arguments: call.arguments as Record<string, unknown>,
    }));
    const script: ScriptedDecision[] = [
      {
        calls: [
          { name: "teleport", arguments: {} },
          { name: "search", arguments: { query: "x", limit: 11 } },
          { name: "search", rawArguments: "{oops" },
        ],
      },
      { text: "let me think" },
      ...plan.map((call) => ({ calls: [call] })),
    ];
    const agent = createScriptedAgent("careless", ({ turn }) => script[turn - 1] as ScriptedDecision);
    const trajectory = await runEpisode({ env, split: "eval", seed: 5, index: 0, config, agent, task: lookup, maxTurns: script.length });
    assert.equal(trajectory.termination, "finished");
    assert.deepEqual(trajectory.formatErrors.byKind, { unknown_tool: 1, invalid_arguments: 1, invalid_json_arguments: 1, no_tool_call: 1 });
    const row = resultFromTrajectory({ trajectory, promptLength: 2, startedAt: "2026-01-01T00:00:00.000Z", durationMs: 1 });
    assert.equal(row.format_errors, 4);
    assert.equal(row.metrics.formatErrors, 4, "the reward's diagnostics read the same ledger");
    assert.equal(trajectory.diagnostics.formatErrors, 4);
    // The two refused calls still cost against the call budget (the JSON one never reached the episode).
    assert.equal(trajectory.reward?.diagnostics.toolCalls, plan.length + 2);
  });

  it("fails an answer dump that contains the right answer", () => {
    const episode = solvedEpisode(lookup, false);
    episode.call("finish", { status: "done", answer: `${lookup.answer}, ${lookup.text}, something else` });
    assert.equal(episode.reward(finished).components.outcome, 0);
  });

  it("gives no outcome credit to an ungrounded lucky guess", () => {
    const episode = env.start(lookup) as SearchPlanEpisode;
    episode.call("finish", { status: "done", answer: lookup.answer });
    const reward = episode.reward(finished);
    assert.equal(reward.components.outcome, 0);
    assert.equal(reward.components.grounding, 0);
    assert.equal(reward.total, 0);
  });

  it("halves the outcome for each collateral mutation", () => {
    const task = findTask((candidate) => candidate.family === "update");
    const episode = solvedEpisode(task, false);
    const requirement = task.requirements[0] as { id: string; field: string };
    const record = task.records.find((candidate) => candidate.id !== requirement.id) as SearchPlanTask["records"][number];
    const field = themeByName(task.theme)
      ?.types.find((type) => type.name === record.type)
      ?.fields.find((spec) => spec.kind === "date") as { name: string };
    episode.call("read_record", { id: record.id });
    assert.equal(episode.call("update_record", { id: record.id, field: field.name, value: "2001-02-03" }).isError, false);
    episode.call("finish", { status: "done" });
    const reward = episode.reward(finished);
    assert.equal(reward.components.outcome, 0.5);
    assert.equal(reward.diagnostics.collateralMutations, 1);
  });

  it("needs the impossible status, a search and no mutation on impossible tasks", () => {
    const task = findTask((candidate) => candidate.family === "impossible");
    const lazy = env.start(task) as SearchPlanEpisode;
    lazy.call("finish", { status: "impossible" });
    assert.equal(lazy.reward(finished).components.outcome, 0);
    assert.equal(solvedEpisode(task, true).reward(finished).total, 1);
  });

  it("is a pure function of the address", () => {
    for (const index of [0, 417]) {
      assert.equal(
        JSON.stringify(env.generate({ split: "train", seed: 3, index, config })),
        JSON.stringify(env.generate({ split: "train", seed: 3, index, config })),
      );
      assert.notEqual(
        JSON.stringify(env.generate({ split: "train", seed: 3, index, config })),
        JSON.stringify(env.generate({ split: "eval", seed: 3, index, config })),
      );
    }
  });
});

describe("search_plan themes and config", () => {
  it("never yields an OOD theme in train/eval, and only OOD themes in search_plan_ood", async () => {
    const { OOD_THEMES } = await import("./themes.ts");
    const { searchPlanOodEnvironment } = await import("../search_plan_ood/index.ts");
    const seen = new Set<string>();
    for (let index = 0; index < 60; index++) {
      for (const split of ["train", "eval"]) seen.add(env.generate({ split, seed: 9, index, config }).theme);
    }
    assert.ok(seen.size >= 5, `only ${[...seen].join(", ")}`);
    for (const theme of seen) assert.ok(!OOD_THEMES.includes(theme), `${theme} leaked into train/eval`);
    const oodConfig = searchPlanOodEnvironment.configSchema.parse({});
    for (let index = 0; index < 10; index++)
      assert.ok(OOD_THEMES.includes(searchPlanOodEnvironment.generate({ split: "ood", seed: 9, index, config: oodConfig }).theme));
  });

  it("rejects OOD themes, unknown keys and bad values with one-line errors naming the key", async () => {
    const { parseConfig, EnvConfigError } = await import("../../core/index.ts");
    const ood = env.configSchema.parse({ themes: ["museum"] });
    assert.throws(
      () => env.generate({ split: "train", seed: 1, index: 0, config: ood }),
      (error: unknown) => error instanceof EnvConfigError && /themes.*museum/.test(error.message),
    );
    assert.throws(() => parseConfig(env.id, env.configSchema, '{"worldSise": 40}'), /config key 'worldSise'/);
    assert.throws(() => parseConfig(env.id, env.configSchema, '{"worldSize": 5}'), /config key 'worldSize'/);
    assert.throws(() => parseConfig(env.id, env.configSchema, '{"minHops": 4, "maxHops": 2}'), /config key 'maxHops'/);
  });

  it("builds worlds of the configured size with near-duplicate names", () => {
    const large = env.configSchema.parse({ worldSize: 300, nearDuplicateRate: 0.5 });
    const task = env.generate({ split: "eval", seed: 1, index: 0, config: large });
    assert.ok(task.records.length >= 300 && task.records.length <= 310, `${task.records.length} records`);
    assert.ok(task.records.every((record) => /^[A-Z]{3}-\d{4}$/.test(record.id)));
    const names = task.records.map((record) => record.name);
    assert.equal(new Set(names).size, names.length, "names are unique");
    const lastWords = names.map((name) => name.split(" ").pop() as string);
    const lookAlike = lastWords.filter((word, index) =>
      lastWords.some(
        (other, position) =>
          position !== index && other !== word && other.length === word.length && [...other].filter((letter, at) => letter !== word[at]).length === 1,
      ),
    );
    assert.ok(lookAlike.length > 10, `only ${lookAlike.length} look-alike names`);
  });
});
