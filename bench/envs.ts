/**
 * search_plan_act / search_plan_ood throughput on one core (median of 5 runs): tasks generated per
 * second (default-size worlds), read/update/link calls per second and searches per second on started
 * episodes, each as wall-clock and per-CPU-second rates, with a verdict against the targets.
 *
 *   npm run bench            (or: npx tsx bench/envs.ts [--seconds 0.3] [--json])
 *
 * With --json it prints only a JSON array of rows `{name, unit, toolgym, reference, ratio, target, pass}`
 * (comparison-rows.ts): per measure, the per-CPU-second rate against its target (reference = the target,
 * judged) and the wall-clock rate (context, pass null).
 *
 * Targets: ≥ 20,000 tasks/s, ≥ 200,000 read/update/link calls/s, ≥ 20,000 searches/s. The verdict is
 * judged on the per-CPU-second rate (the work one core does; wall-clock rates drop when other processes
 * share the core); the wall-clock verdict is shown beside it. The benchmark is single-threaded.
 *
 * What the numbers say (docs/benchmarks.md has them): search_plan_ood misses the 20 k target, and in this
 * record format no generator can reach it. After the goal step (12–16 µs), 20 k tasks per CPU-second leaves
 * 34–38 µs for a 160-record world, no more than the object floor of bench/world-floor.ts (33–36 µs), which
 * makes no uniqueness checks, codes, look-alike names or name clusters; the table prints that cap (object
 * floor + goal step). A columnar format could report more only by building records when an episode reads
 * them, and an episode's first search reads every record, so the last row times a fresh task taken to its
 * first search result. A pool of prebuilt names (16,384 per kind) measured 10–20% slower than building names
 * from the syllable tables: the pool is read at random and misses the cache.
 */
import { loadavg } from "node:os";
import { createRandom, type AnyEnvironment } from "../src/core/index.ts";
import type { SearchPlanEpisode } from "../src/envs/search_plan_act/episode.ts";
import { searchPlanActEnvironment } from "../src/envs/search_plan_act/index.ts";
import type { SearchPlanTask } from "../src/envs/search_plan_act/task.ts";
import { IN_DISTRIBUTION_THEMES, OOD_THEMES, themeByName, type Theme } from "../src/envs/search_plan_act/themes.ts";
import type { SearchPlanConfig } from "../src/envs/search_plan_act/config.ts";
import { taskOfWorld } from "../src/envs/search_plan_act/generate.ts";
import { generateWorld, type World } from "../src/envs/search_plan_act/world.ts";
import { searchPlanOodEnvironment } from "../src/envs/search_plan_ood/index.ts";
import { row as comparisonRow, type ComparisonRow } from "./comparison-rows.ts";
import { floorWorld, objectFloorWorld } from "./world-floor.ts";

const argumentIndex = process.argv.indexOf("--seconds");
const seconds = argumentIndex > 0 ? Number(process.argv[argumentIndex + 1]) : 0.3;
const RUNS = 5;

interface Rate {
  wall: number;
  cpu: number;
}

/**
 * Operations per wall-clock second and per CPU-second (user + system of this process) of `body` over
 * `seconds` of wall time, after a short warm-up; `body` returns the operations it did.
 */
function rate(body: (iteration: number) => number): Rate {
  // Warm-up: long enough, in calls and in time, for the JIT to have optimised the code paths (its
  // compiler threads' CPU time would otherwise count against the first measure).
  let iteration = 0;
  const warmupEnd = performance.now() + 250;
  while (iteration < 2000 || performance.now() < warmupEnd) body(iteration++);
  let operations = 0;
  const cpu = process.cpuUsage();
  const start = performance.now();
  const end = start + seconds * 1000;
  let now = start;
  while (now < end) {
    for (let batch = 0; batch < 16; batch++) operations += body(iteration++);
    now = performance.now();
  }
  const used = process.cpuUsage(cpu);
  return { wall: operations / ((now - start) / 1000), cpu: operations / ((used.user + used.system) / 1e6) };
}

/** Median of RUNS runs, wall-clock and per-CPU-second rates taken independently. */
function median(body: (iteration: number) => number): Rate {
  const rates = Array.from({ length: RUNS }, () => rate(body));
  const middle = (values: number[]) => values.sort((left, right) => left - right)[Math.floor(RUNS / 2)] as number;
  return { wall: middle(rates.map((entry) => entry.wall)), cpu: middle(rates.map((entry) => entry.cpu)) };
}

interface Row {
  env: string;
  /** Worlds per second of bench/world-floor.ts at this world size: no task can be generated faster. */
  floor?: Rate;
  /** The same floor with the records as objects (`objectFloorWorld`): no generator returning record objects is faster. */
  objectFloor?: Rate;
  /** Worlds per second of the generator's own world step (what a task makes before its goals and text). */
  world?: Rate;
  /** Goal steps per second (goals, text and requirements over a built world). */
  goals?: Rate;
  /** Fresh tasks per second taken to their first search result (generate, start, one search): what an episode needs first. */
  ready?: Rate;
  worldSize: number;
  metric: string;
  target: number;
  rate: Rate;
}

const TARGETS = { "tasks generated": 20_000, read_record: 200_000, update_record: 200_000, link_records: 200_000, search: 20_000 };

function benchmark(env: AnyEnvironment): Row[] {
  const config = env.configSchema.parse({});
  const split = env.defaultSplit;
  const worldSize = (config as { worldSize: number }).worldSize;
  const row = (metric: keyof typeof TARGETS, measured: Rate): Row => ({ env: env.id, worldSize, metric, target: TARGETS[metric], rate: measured });
  const generate = median((index) => (env.generate({ split, seed: 1, index, config }), 1));
  // Every episode searches first (the task names records, never ids), and the first search indexes the world.
  const ready = median((index) => {
    (env.start(env.generate({ split, seed: 1, index, config })) as SearchPlanEpisode).call("search", { query: "report" });
    return 1;
  });

  const tasks: SearchPlanTask[] = Array.from({ length: 64 }, (_, index) => env.generate({ split, seed: 2, index, config }));
  const episodes = () => tasks.map((task) => env.start(task) as SearchPlanEpisode);
  let pool = episodes();
  const read = median((iteration) => {
    const episode = pool[iteration % pool.length] as SearchPlanEpisode;
    const records = episode.task.records;
    for (let i = 0; i < 32; i++) episode.call("read_record", { id: (records[(iteration + i) % records.length] as { id: string }).id });
    return 32;
  });

  const enumFields = tasks.map((task) => {
    const theme = themeByName(task.theme);
    return task.records.map((record) =>
      theme?.types.find((type) => type.name === record.type)?.fields.find((field) => field.kind === "enum" && !field.readOnly),
    );
  });
  const update = median((iteration) => {
    if (iteration % 2000 === 0) pool = episodes();
    const slot = iteration % pool.length;
    const episode = pool[slot] as SearchPlanEpisode;
    const records = episode.task.records;
    let calls = 0;
    for (let i = 0; i < 32; i++) {
      const position = (iteration + i) % records.length;
      const field = enumFields[slot]?.[position];
      if (!field?.values) continue;
      episode.call("update_record", {
        id: (records[position] as { id: string }).id,
        field: field.name,
        value: field.values[(iteration + i) % field.values.length] as string,
      });
      calls++;
    }
    return calls;
  });

  const linkPairs = tasks.map((task) => {
    const theme = themeByName(task.theme);
    const relation = theme?.relations.find((candidate) => !candidate.functional);
    const sources = task.records.filter((record) => record.type === relation?.from);
    const targets = task.records.filter((record) => record.type === relation?.to);
    return { relation: relation?.name ?? "", sources, targets };
  });
  const link = median((iteration) => {
    if (iteration % 500 === 0) pool = episodes();
    const slot = iteration % pool.length;
    const episode = pool[slot] as SearchPlanEpisode;
    const { relation, sources, targets } = linkPairs[slot] as (typeof linkPairs)[number];
    for (let i = 0; i < 32; i++) {
      const source = sources[(iteration + i) % sources.length] as { id: string };
      const target = targets[(iteration * 7 + i) % targets.length] as { id: string };
      episode.call("link_records", { source_id: source.id, relation, target_id: target.id });
    }
    return 32;
  });

  pool = episodes();
  const queries = tasks.map((task) =>
    task.records.flatMap((record) => [record.name, record.name.split(" ")[0] as string, String(Object.values(record.fields)[0])]),
  );
  const search = median((iteration) => {
    const slot = iteration % pool.length;
    const episode = pool[slot] as SearchPlanEpisode;
    const list = queries[slot] as string[];
    for (let i = 0; i < 8; i++) episode.call("search", { query: list[(iteration + i) % list.length] as string, limit: 5 });
    return 8;
  });
  const floor = median((index) => (floorWorld(createRandom(env.id, "floor", index), worldSize), 1));
  const objectFloor = median((index) => (objectFloorWorld(createRandom(env.id, "floor", index), worldSize), 1));
  // The two steps of `generateTask`, with its draws: the task's stream picks the theme, its "world" fork
  // builds the world and its "task" fork draws the goals.
  const themes = env.id === searchPlanOodEnvironment.id ? OOD_THEMES : IN_DISTRIBUTION_THEMES;
  const stream = (index: number) => {
    const random = createRandom(env.id, split, 1, index);
    return { random, theme: themeByName(random.pick(themes)) as Theme };
  };
  const world = median((index) => {
    const { random, theme } = stream(index);
    generateWorld(theme, config as SearchPlanConfig, random.fork("world"));
    return 1;
  });
  // 64 built worlds, each with its own copy of the link table (the generator shares one across worlds).
  const built = Array.from({ length: 64 }, (_, index) => {
    const { random, theme } = stream(index);
    const made = generateWorld(theme, config as SearchPlanConfig, random.fork("world"));
    return { theme, world: { ...made, functional: made.functional.slice() } as World };
  });
  const goals = median((index) => {
    const { theme, world: made } = built[index % built.length] as (typeof built)[number];
    const options = { envId: env.id, split, seed: 1, index, config: config as SearchPlanConfig, allowedThemes: themes };
    taskOfWorld(options, theme, made, createRandom(env.id, split, 1, index, "task"));
    return 1;
  });
  return [
    { ...row("tasks generated", generate), floor, objectFloor, world, goals, ready },
    row("read_record", read),
    row("update_record", update),
    row("link_records", link),
    row("search", search),
  ];
}

const started = performance.now();
const rows = [...benchmark(searchPlanActEnvironment), ...benchmark(searchPlanOodEnvironment)];

/** Microseconds per operation at a per-CPU-second rate. */
const micros = (rate: Rate) => 1e6 / rate.cpu;

/**
 * The most tasks per CPU-second a generator returning record objects could make: one object-floor world
 * plus the measured goal step each.
 */
function ceilingOf(entry: Row): number | null {
  if (!entry.goals || !entry.objectFloor) return null;
  return 1e6 / (micros(entry.objectFloor) + micros(entry.goals));
}

/** Context rows for a "tasks generated" measure: the floors, the world step and the ceiling they set. */
function floorRows(entry: Row): ComparisonRow[] {
  const prefix = `${entry.env} (world ${entry.worldSize})`;
  const context = (name: string, unit: string, value: number, target: string) =>
    comparisonRow({ name: `${prefix} ${name}`, unit, toolgym: value, reference: entry.target, target, pass: null });
  const rows = [
    context(
      "ceiling: worlds/CPU-s of the strings-only floor (bench/world-floor.ts)",
      "worlds/CPU-s",
      (entry.floor as Rate).cpu,
      "context: a task cannot be made faster than its world",
    ),
  ];
  if (entry.objectFloor) rows.push(context("worlds/CPU-s of the record-object floor (bench/world-floor.ts)", "worlds/CPU-s", entry.objectFloor.cpu, "context"));
  if (entry.world) rows.push(context("worlds/CPU-s of the generator's world step", "worlds/CPU-s", entry.world.cpu, "context"));
  if (entry.goals) rows.push(context("goal steps/CPU-s (goals, text, requirements over a built world)", "tasks/CPU-s", entry.goals.cpu, "context"));
  if (entry.ready)
    rows.push(context("tasks/CPU-s taken to their first search result (generate, start, one search)", "tasks/CPU-s", entry.ready.cpu, "context"));
  const ceiling = ceilingOf(entry);
  if (ceiling !== null) rows.push(context("ceiling with record objects: object floor + the goal step", "tasks/CPU-s", ceiling, "context"));
  return rows;
}

/** The rows as comparison rows: each measure's per-CPU-second rate judged against its target, the wall-clock rate as context. */
function comparisonRows(measured: Row[]): ComparisonRow[] {
  return measured.flatMap((entry) => {
    const name = `${entry.env} (world ${entry.worldSize}) ${entry.metric}`;
    const unit = entry.metric === "tasks generated" ? "tasks" : entry.metric === "search" ? "searches" : "calls";
    const floor = entry.floor ? floorRows(entry) : [];
    return [
      ...floor,
      comparisonRow({
        name: `${name} per CPU-second`,
        unit: `${unit}/CPU-s`,
        toolgym: entry.rate.cpu,
        reference: entry.target,
        target: `≥ ${entry.target} (reference = target)`,
        pass: entry.rate.cpu >= entry.target,
      }),
      comparisonRow({
        name: `${name} per wall-clock second`,
        unit: `${unit}/s`,
        toolgym: entry.rate.wall,
        reference: entry.target,
        target: "context",
        pass: null,
      }),
    ];
  });
}

function printTable(): void {
  const format = (value: number) => Math.round(value).toLocaleString("en-US");
  const verdict = (value: number, target: number) => (value >= target ? "PASS" : "FAIL");
  const header = ["env", "world", "measure (per second)", "target", "per CPU-s", "wall-clock", "verdict", "wall verdict"];
  const body = rows.map((entry) => [
    entry.env,
    String(entry.worldSize),
    entry.metric,
    `≥ ${format(entry.target)}`,
    format(entry.rate.cpu),
    format(entry.rate.wall),
    verdict(entry.rate.cpu, entry.target),
    verdict(entry.rate.wall, entry.target),
  ]);
  const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((line) => (line[column] as string).length)));
  const line = (cells: string[]) =>
    cells.map((cell, column) => (column === 0 || column === 2 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join("  ");
  const [load] = loadavg();
  process.stdout.write(
    `search_plan throughput on one core: median of ${RUNS} runs of ${seconds}s per measure; verdict on the per-CPU-second rate ` +
      `(1-min load average ${load?.toFixed(1)}: a loaded machine lowers the wall-clock rates)\n`,
  );
  process.stdout.write(`${[line(header), line(widths.map((width) => "-".repeat(width))), ...body.map(line)].join("\n")}\n`);
  for (const entry of rows.filter((candidate) => candidate.floor)) {
    const floor = entry.floor as Rate;
    process.stdout.write(
      `${entry.env}: ceiling ${format(floor.cpu)} worlds/CPU-s (${micros(floor).toFixed(1)} µs each) for ${entry.worldSize} records' ids, names and draws alone ` +
        `(bench/world-floor.ts); tasks: ${format(entry.rate.cpu)}/CPU-s = ${((entry.rate.cpu / floor.cpu) * 100).toFixed(0)}% of it\n`,
    );
    const ceiling = ceilingOf(entry);
    if (ceiling === null || !entry.world || !entry.goals || !entry.objectFloor) continue;
    process.stdout.write(
      `${entry.env}: a task is ${micros(entry.rate).toFixed(1)} µs: its world ${micros(entry.world).toFixed(1)} µs, its goals and text ${micros(entry.goals).toFixed(1)} µs; ` +
        `the floor as record objects takes ${micros(entry.objectFloor).toFixed(1)} µs, so a generator returning record objects makes at most ` +
        `${format(ceiling)} tasks/CPU-s unless its goal step gets cheaper\n`,
    );
    if (entry.ready)
      process.stdout.write(
        `${entry.env}: a fresh task to its first search result (generate, start, one search) takes ${micros(entry.ready).toFixed(1)} µs; ` +
          `generating it is ${((micros(entry.rate) / micros(entry.ready)) * 100).toFixed(0)}% of that\n`,
      );
  }
  process.stdout.write(`(${((performance.now() - started) / 1000).toFixed(1)}s)\n`);
}

if (process.argv.includes("--json")) process.stdout.write(`${JSON.stringify(comparisonRows(rows), null, 2)}\n`);
else printTable();
