/**
 * Does search_plan's hand-written argument check pay? The episode driver checks every tool call's arguments
 * before the episode runs it (src/rollout/episode-driver.ts); search_plan's validators are hand-written
 * (SEARCH_PLAN_VALIDATORS, also for their messages), every other toolbox uses zod's `safeParse`. This times,
 * per CPU-second of this process (median of 5 runs, the variants interleaved):
 *
 * - the check alone, on a valid `read_record` and a valid `search` argument object: hand-written vs zod;
 * - whole calls through the driver as the server makes them (`transcript: false`, valid `read_record` calls
 *   on started search_plan_act episodes) with the hand-written validators, with zod's, and the episode's
 *   `call` without any driver (the floor).
 *
 *     npx tsx bench/arguments.ts [--seconds 0.3]
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import type { AnyEnvironment, ArgumentValidator, Episode } from "../src/core/index.ts";
import { zodValidator } from "../src/envs/_kit/toolbox.ts";
import type { SearchPlanEpisode } from "../src/envs/search_plan_act/episode.ts";
import { searchPlanActEnvironment as env } from "../src/envs/search_plan_act/index.ts";
import type { SearchPlanTask } from "../src/envs/search_plan_act/task.ts";
import { SEARCH_PLAN_INPUTS, SEARCH_PLAN_VALIDATORS } from "../src/envs/search_plan_act/tools.ts";
import { EpisodeDriver } from "../src/rollout/episode-driver.ts";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "0.3" } } });
const seconds = Number(values.seconds);
const RUNS = 5;

/** Operations per CPU-second (user + system of this process) of `body` over `seconds`, after a warm-up. */
function rate(body: (iteration: number) => number): number {
  let iteration = 0;
  const warmupEnd = performance.now() + 200;
  while (iteration < 2000 || performance.now() < warmupEnd) body(iteration++);
  let operations = 0;
  const cpu = process.cpuUsage();
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) for (let batch = 0; batch < 16; batch++) operations += body(iteration++);
  const used = process.cpuUsage(cpu);
  return operations / ((used.user + used.system) / 1e6);
}

/** The median rate of each variant over RUNS rounds, the variants taking turns within a round. */
function compare(variants: Record<string, (iteration: number) => number>): Record<string, number> {
  const rates: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (let round = 0; round < RUNS; round++) for (const [name, body] of Object.entries(variants)) rates[name]?.push(rate(body));
  return Object.fromEntries(Object.entries(rates).map(([name, list]) => [name, list.sort((left, right) => left - right)[Math.floor(RUNS / 2)] as number]));
}

const ZOD_VALIDATORS: ReadonlyMap<string, ArgumentValidator> = new Map(
  Object.entries(SEARCH_PLAN_INPUTS).map(([name, input]) => [name, zodValidator(name, input)]),
);

const config = env.configSchema.parse({});
const tasks: SearchPlanTask[] = Array.from({ length: 64 }, (_, index) => env.generate({ split: "eval", seed: 2, index, config }));
const recordIds = tasks.map((task) => task.records.map((record) => ({ id: record.id })));

/** search_plan_act with other validators on its episodes (zod's), everything else as shipped. */
function withValidators(validators: ReadonlyMap<string, ArgumentValidator>): AnyEnvironment {
  return {
    ...env,
    start: (task: SearchPlanTask): Episode => {
      const episode = env.start(task);
      Object.defineProperty(episode, "validators", { value: validators });
      return episode;
    },
  };
}

function drivers(environment: AnyEnvironment): EpisodeDriver[] {
  return tasks.map((task, index) => new EpisodeDriver({ env: environment, split: "eval", seed: 2, index, config, task, transcript: false, maxTurns: 1e9 }));
}

const readArguments = { id: "EMP-0192" };
const searchArguments = { query: "Oriveth Calloway", type: "employee", limit: 5 };
const handRead = SEARCH_PLAN_VALIDATORS.get("read_record") as ArgumentValidator;
const zodRead = ZOD_VALIDATORS.get("read_record") as ArgumentValidator;
const handSearch = SEARCH_PLAN_VALIDATORS.get("search") as ArgumentValidator;
const zodSearch = ZOD_VALIDATORS.get("search") as ArgumentValidator;
const checks = compare({
  "read_record check, hand-written": () => (handRead(readArguments), 1),
  "read_record check, zod": () => (zodRead(readArguments), 1),
  "search check, hand-written": () => (handSearch(searchArguments), 1),
  "search check, zod": () => (zodSearch(searchArguments), 1),
});

const hand = drivers(env);
const zod = drivers(withValidators(ZOD_VALIDATORS));
const bare = tasks.map((task) => env.start(task) as SearchPlanEpisode);
const calls = (pool: EpisodeDriver[]) => (iteration: number) => {
  const slot = iteration % pool.length;
  const driver = pool[slot] as EpisodeDriver;
  const ids = recordIds[slot] as Array<{ id: string }>;
  for (let i = 0; i < 32; i++) driver.call({ name: "read_record", arguments: ids[(iteration + i) % ids.length] });
  return 32;
};
const whole = compare({
  "read_record through the driver, hand-written": calls(hand),
  "read_record through the driver, zod": calls(zod),
  "read_record, episode.call alone (no driver)": (iteration) => {
    const slot = iteration % bare.length;
    const episode = bare[slot] as SearchPlanEpisode;
    const ids = recordIds[slot] as Array<{ id: string }>;
    for (let i = 0; i < 32; i++) episode.call("read_record", ids[(iteration + i) % ids.length]);
    return 32;
  },
});

const perSecond = (value: number) => `${(value / 1e6).toFixed(2)} M/s`.padStart(10);
const nanoseconds = (value: number) => `${(1e9 / value).toFixed(0)} ns`.padStart(8);
console.log(`search_plan argument checks, per CPU-second (median of ${RUNS} interleaved runs of ${seconds}s); load ${loadavg()[0]?.toFixed(1)}`);
for (const [name, value] of [...Object.entries(checks), ...Object.entries(whole)]) console.log(`${name.padEnd(48)} ${perSecond(value)} ${nanoseconds(value)}`);
