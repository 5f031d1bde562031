/**
 * search_plan_act / search_plan_ood throughput on one core (median of 5 runs):
 * tasks generated per second (default-size worlds), read/update/link calls per second and searches per
 * second on a started episode.
 *
 *   npm run bench            (or: npx tsx bench/envs.ts [--seconds 0.5])
 *
 * Targets: ≥ 20,000 tasks/s, ≥ 200,000 read/update/link calls/s, ≥ 20,000 searches/s.
 */
import type { AnyEnvironment } from "../src/core/index.ts";
import type { SearchPlanEpisode } from "../src/envs/search_plan_act/episode.ts";
import { searchPlanActEnvironment } from "../src/envs/search_plan_act/index.ts";
import type { SearchPlanTask } from "../src/envs/search_plan_act/task.ts";
import { themeByName } from "../src/envs/search_plan_act/themes.ts";
import { searchPlanOodEnvironment } from "../src/envs/search_plan_ood/index.ts";

const argumentIndex = process.argv.indexOf("--seconds");
const seconds = argumentIndex > 0 ? Number(process.argv[argumentIndex + 1]) : 0.5;
const RUNS = 5;

/**
 * Operations per CPU-second of `body` over `seconds` of wall time (after a short warm-up); `body`
 * returns the operations it did. CPU time (user + system of this single-threaded process) rather than
 * wall time keeps the number meaningful on a shared, loaded machine.
 */
function rate(body: (iteration: number) => number): number {
  let iteration = 0;
  const warmupEnd = performance.now() + 100;
  while (performance.now() < warmupEnd) body(iteration++);
  let operations = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  const end = start + seconds * 1000;
  while (performance.now() < end) for (let batch = 0; batch < 16; batch++) operations += body(iteration++);
  const used = process.cpuUsage(cpu);
  return operations / ((used.user + used.system) / 1e6);
}

function median(body: (iteration: number) => number): number {
  const rates = Array.from({ length: RUNS }, () => rate(body)).sort((left, right) => left - right);
  return rates[Math.floor(RUNS / 2)] as number;
}

function benchmark(env: AnyEnvironment) {
  const config = env.configSchema.parse({});
  const split = env.defaultSplit;
  const generate = median((index) => (env.generate({ split, seed: 1, index, config }), 1));

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
    for (let i = 0; i < 32; i++) {
      const position = (iteration + i) % records.length;
      const field = enumFields[slot]?.[position];
      if (field?.values)
        episode.call("update_record", {
          id: (records[position] as { id: string }).id,
          field: field.name,
          value: field.values[(iteration + i) % field.values.length] as string,
        });
    }
    return 32;
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
  return { env: env.id, worldSize: (config as { worldSize: number }).worldSize, generate, read, update, link, search };
}

const rows = [benchmark(searchPlanActEnvironment), benchmark(searchPlanOodEnvironment)];
const format = (value: number) => Math.round(value).toLocaleString("en-US");
const header = ["env", "world", "tasks/s", "read/s", "update/s", "link/s", "search/s"];
const body = rows.map((row) => [
  row.env,
  String(row.worldSize),
  format(row.generate),
  format(row.read),
  format(row.update),
  format(row.link),
  format(row.search),
]);
const widths = header.map((cell, column) => Math.max(cell.length, ...body.map((line) => (line[column] as string).length)));
const line = (cells: string[]) =>
  cells.map((cell, column) => (column < 2 ? cell.padEnd(widths[column] as number) : cell.padStart(widths[column] as number))).join("  ");
process.stdout.write(
  `search_plan throughput per CPU-second, one core, median of ${RUNS} runs of ${seconds}s (targets: tasks/s ≥ 20,000; read/update/link ≥ 200,000; search ≥ 20,000)\n`,
);
process.stdout.write(`${[line(header), line(widths.map((width) => "-".repeat(width))), ...body.map(line)].join("\n")}\n`);
