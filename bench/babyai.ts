/**
 * BabyAI throughput on one thread: environment steps per second with the BALROG text observation built
 * after every step, and resets (level generation + first observation) per second.
 *
 *   npx tsx bench/babyai.ts [--seconds 3]
 *
 * Reference (spec): the Python implementation BALROG runs does about 1,800 steps/s and 30 resets/s on one
 * core of a 2-core x86 machine; the targets are 100× that.
 */
import { ACTION } from "../src/envs/babyai/constants.ts";
import { BABYAI_TASKS, MixedTrainLocalLevel, type BabyAITask } from "../src/envs/babyai/level.ts";
import { describeObservation } from "../src/envs/babyai/text.ts";
import { babyaiEnvironment } from "../src/envs/babyai/index.ts";

const argumentIndex = process.argv.indexOf("--seconds");
const seconds = argumentIndex > 0 ? Number(process.argv[argumentIndex + 1]) : 3;
const MOVES = [ACTION.left, ACTION.right, ACTION.forward, ACTION.forward, ACTION.pickup, ACTION.drop, ACTION.toggle];

function measure(label: string, body: (iteration: number) => number): { label: string; rate: number; cpuRate: number; checksum: number } {
  let iterations = 0;
  let checksum = 0;
  const warmupEnd = performance.now() + 300;
  while (performance.now() < warmupEnd) checksum += body(iterations++);
  iterations = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const end = start + seconds * 1000;
  let elapsed = 0;
  while (elapsed === 0 || performance.now() < end) {
    for (let batch = 0; batch < 256; batch++) checksum += body(iterations++);
    elapsed = performance.now() - start;
  }
  const cpu = process.cpuUsage(cpuStart);
  return { label, rate: iterations / ((performance.now() - start) / 1000), cpuRate: iterations / ((cpu.user + cpu.system) / 1e6), checksum };
}

/** Steps with a pseudo-random action stream; a finished episode is reset on a new seed (reset not timed apart). */
function stepBenchmark(task: BabyAITask, numDistractors: number) {
  const level = new MixedTrainLocalLevel(task, numDistractors);
  let seed = 0;
  level.reset(seed);
  let state = 12345;
  return measure(`steps/s   ${task} num_dists=${numDistractors}`, () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    level.step(MOVES[(state >>> 16) % MOVES.length] as number);
    const text = describeObservation(level);
    if (level.terminated || level.truncated) level.reset(++seed);
    return text.length;
  });
}

function resetBenchmark(task: BabyAITask, numDistractors: number) {
  const level = new MixedTrainLocalLevel(task, numDistractors);
  return measure(`resets/s  ${task} num_dists=${numDistractors}`, (iteration) => {
    level.reset(iteration);
    return describeObservation(level).length;
  });
}

/** The full Episode path: BALROG reply parsing, step, text, notice handling, per reply. */
function episodeBenchmark() {
  const config = babyaiEnvironment.configSchema.parse({ task: "putnext" });
  let index = 0;
  let episode = babyaiEnvironment.start(babyaiEnvironment.generate({ split: "eval", seed: 0, index, config }));
  const replies = ["turn left", "go forward", "turn right", "go forward", "pick up", "drop", "toggle", "not an action"];
  return measure("replies/s Episode.reply (putnext, incl. resets)", (iteration) => {
    const result = (episode.reply as (text: string) => { content: string; done: boolean })(replies[iteration % replies.length] as string);
    if (result.done) episode = babyaiEnvironment.start(babyaiEnvironment.generate({ split: "eval", seed: 0, index: ++index, config }));
    return result.content.length;
  });
}

const rows = [
  ...BABYAI_TASKS.map((task) => stepBenchmark(task, 0)),
  stepBenchmark("goto", 8),
  ...BABYAI_TASKS.map((task) => resetBenchmark(task, 0)),
  resetBenchmark("putnext", 8),
  resetBenchmark("open", 8),
  episodeBenchmark(),
];
const format = (value: number) => Math.round(value).toLocaleString("en-US").padStart(12);
process.stdout.write(`babyai benchmark, one thread, ${seconds}s per row (node ${process.version})\n`);
process.stdout.write(`${"".padEnd(52)} ${"wall-clock".padStart(12)} ${"per CPU-s".padStart(12)}\n`);
for (const row of rows) process.stdout.write(`${row.label.padEnd(52)} ${format(row.rate)} ${format(row.cpuRate)}\n`);
process.stdout.write("per CPU-s = iterations / CPU time this process used (robust to other load on the machine)\n");
process.stdout.write("targets: ≥ 180,000 steps/s, ≥ 3,000 resets/s (100× the Python reference)\n");
