import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AnyEnvironment } from "../src/core/index.ts";
import { searchPlanActEnvironment } from "../src/envs/search_plan_act/index.ts";
import { runSolver } from "../src/envs/search_plan_act/solver.ts";
import type { SearchPlanTask } from "../src/envs/search_plan_act/task.ts";
import { SessionStore } from "../src/server/session-store.ts";

/**
 * The sessions a GRPO trainer opens on one prompt share one task in `toolgym serve`: the store generates
 * it once per address while any of them is open, and each session still plays its own episode.
 */

/** search_plan_act, counting the tasks it generates (the environment itself does the work). */
function countingEnvironment(): { env: AnyEnvironment; generated: () => number } {
  let generated = 0;
  const real = searchPlanActEnvironment as unknown as AnyEnvironment;
  const env: AnyEnvironment = {
    ...real,
    generate: (address) => {
      generated++;
      return real.generate(address);
    },
  };
  return { env, generated: () => generated };
}

function storeOf(env: AnyEnvironment, now?: () => number): SessionStore {
  return new SessionStore({ environments: { [env.id]: env }, maxSessions: 100, idleMilliseconds: 60_000, ...(now ? { now } : {}) });
}

const address = { env: "search_plan_act", split: "eval", seed: 3, index: 4 };

/** The oracle's calls for the address's task, recorded on an episode of its own. */
function oracleCalls(): Array<[string, unknown]> {
  const task = searchPlanActEnvironment.generate({ split: "eval", seed: 3, index: 4, config: searchPlanActEnvironment.configSchema.parse({}) });
  const episode = searchPlanActEnvironment.start(task);
  const calls: Array<[string, unknown]> = [];
  runSolver(task as SearchPlanTask, (name, args) => {
    calls.push([name, args]);
    return episode.call(name, args);
  });
  return calls;
}

describe("toolgym serve: sessions on one address", () => {
  it("generate its task once while any of them is open, and again after the last one closes", () => {
    const { env, generated } = countingEnvironment();
    const store = storeOf(env);
    const group = [store.create(address), store.create(address), store.create({ ...address, max_turns: 3 })];
    assert.equal(generated(), 1);
    assert.equal(store.openTasks, 1);
    // Another seed, index or config is another task; a config given as JSON text is the same config.
    store.create({ ...address, seed: 4 });
    store.create({ ...address, config: { worldSize: 30 } });
    store.create({ ...address, config: '{"worldSize": 30}' });
    assert.equal(generated(), 3);
    assert.equal(store.openTasks, 3);
    store.close(group[0]?.id);
    store.close(group[1]?.id);
    assert.equal(store.openTasks, 3, "one session of the group is still open");
    store.create(address);
    assert.equal(generated(), 3, "the group's task is still held");
    store.closeAll();
    assert.equal(store.openTasks, 0);
    store.create(address);
    assert.equal(generated(), 4, "a task is not kept past its sessions");
  });

  it("let go of a task when its sessions are reaped", () => {
    let clock = 0;
    const { env, generated } = countingEnvironment();
    const store = storeOf(env, () => clock);
    store.create(address);
    store.create(address);
    clock = 120_000;
    assert.equal(store.reapIdle(), 2);
    assert.equal(store.openTasks, 0);
    store.create(address);
    assert.equal(generated(), 2);
  });

  it("play their own episodes: one session's changes and reward are not another's", async () => {
    const { env } = countingEnvironment();
    const store = storeOf(env);
    const calls = oracleCalls();
    const changes = calls.filter(([name]) => name === "update_record" || name === "link_records");
    assert.ok(changes.length > 0, "the task's oracle changes the database (pick another index otherwise)");
    const player = store.create(address);
    const watcher = store.create(address);
    for (const [name, args] of calls) assert.equal((await store.call(player.id, name, args)).is_error, false, `${name} ${JSON.stringify(args)}`);
    assert.equal((await store.reward(player.id)).total, 1);
    // The watcher has changed nothing: its episode still sees the task as generated.
    const [, firstChange] = changes[0] as [string, { id?: string; source_id?: string }];
    const changedId = firstChange.id ?? firstChange.source_id;
    const seen = JSON.parse((await store.call(watcher.id, "read_record", { id: changedId })).content) as unknown;
    const fresh = storeOf(countingEnvironment().env);
    const reference = fresh.create(address);
    assert.deepEqual(seen, JSON.parse((await fresh.call(reference.id, "read_record", { id: changedId })).content));
    assert.equal((await store.reward(watcher.id, "finished")).components.outcome, 0);
    // A session opened after the player finished, on the same held task, plays it from the start.
    const late = store.create(address);
    for (const [name, args] of calls) store.call(late.id, name, args);
    assert.equal((await store.reward(late.id)).total, 1);
  });
});
