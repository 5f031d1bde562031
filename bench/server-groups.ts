/**
 * What a GRPO group costs `toolgym serve` per session: G sessions opened together on one address (a prompt's
 * rollouts) against the same sessions opened one after another. Open sessions on one address share one task
 * (src/server/session-store.ts), so a group generates it once and its episodes share the search index and
 * the reward's plan length; sessions one at a time each generate their task again. Each session plays the
 * oracle's calls for the task, asks for its reward and closes. Measured on the session store itself
 * (no HTTP: bench/server.ts measures the transport), as CPU time per session, median of 5 runs.
 *
 *     npx tsx bench/server-groups.ts [--group 8] [--tasks 300] [--json]
 */
import { parseArgs } from "node:util";
import type { AnyEnvironment } from "../src/core/index.ts";
import { searchPlanActEnvironment } from "../src/envs/search_plan_act/index.ts";
import { runSolver } from "../src/envs/search_plan_act/solver.ts";
import type { SearchPlanTask } from "../src/envs/search_plan_act/task.ts";
import { searchPlanOodEnvironment } from "../src/envs/search_plan_ood/index.ts";
import { SessionStore } from "../src/server/session-store.ts";
import { printRows, row, type ComparisonRow } from "./comparison-rows.ts";

const { values } = parseArgs({ options: { group: { type: "string", default: "8" }, tasks: { type: "string", default: "300" }, json: { type: "boolean" } } });
const GROUP = Number(values.group);
const TASKS = Number(values.tasks);
const RUNS = 5;

type Calls = Array<[string, unknown]>;

/** The oracle's calls for each task, recorded on an episode outside the measure. */
function oraclePlans(env: AnyEnvironment, first: number): Calls[] {
  const config = env.configSchema.parse({});
  return Array.from({ length: TASKS }, (_, offset) => {
    const task = env.generate({ split: env.defaultSplit, seed: 0, index: first + offset, config });
    const episode = env.start(task);
    const calls: Calls = [];
    runSolver(task as SearchPlanTask, (name, args) => {
      calls.push([name, args]);
      return episode.call(name, args);
    });
    return calls;
  });
}

async function play(store: SessionStore, id: string, calls: Calls): Promise<void> {
  for (const [name, args] of calls) {
    // Only a conversational call (tau2's customer tool) answers later; awaiting the others would add a microtask each.
    const outcome = store.call(id, name, args);
    if (outcome instanceof Promise) await outcome;
  }
  await store.reward(id);
  store.close(id);
}

/** CPU microseconds per session over every task: `together` opens a task's G sessions before playing them. */
async function perSession(env: AnyEnvironment, plans: Calls[], first: number, together: boolean): Promise<number> {
  const store = new SessionStore({ environments: { [env.id]: env }, maxSessions: GROUP + 1, idleMilliseconds: 3_600_000 });
  const address = (index: number) => ({ env: env.id, split: env.defaultSplit, seed: 0, index });
  const started = process.cpuUsage();
  for (let offset = 0; offset < plans.length; offset++) {
    const calls = plans[offset] as Calls;
    if (together) {
      const ids = Array.from({ length: GROUP }, () => store.create(address(first + offset)).id);
      for (const id of ids) await play(store, id, calls);
    } else for (let member = 0; member < GROUP; member++) await play(store, store.create(address(first + offset)).id, calls);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / (plans.length * GROUP);
}

const median = (samples: number[]) => samples.sort((left, right) => left - right)[Math.floor(samples.length / 2)] as number;

const rows: ComparisonRow[] = [];
for (const env of [searchPlanActEnvironment, searchPlanOodEnvironment] as unknown as AnyEnvironment[]) {
  const warm = oraclePlans(env, 100_000);
  await perSession(env, warm, 100_000, true);
  await perSession(env, warm, 100_000, false);
  const plans = oraclePlans(env, 0);
  const together: number[] = [];
  const apart: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    together.push(await perSession(env, plans, 0, true));
    apart.push(await perSession(env, plans, 0, false));
  }
  rows.push(
    row({
      name: `${env.id}: server CPU per session, ${GROUP} open together (vs one at a time)`,
      unit: "µs/session",
      toolgym: median(together),
      reference: median(apart),
      target: "context: a group shares its task",
      pass: null,
    }),
  );
}

printRows(rows, [
  `GRPO groups on the session store: ${GROUP} sessions per task over ${TASKS} tasks, each playing the oracle's calls, reward, close; median of ${RUNS} runs`,
]);
