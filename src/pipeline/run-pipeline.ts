import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { once } from "node:events";
import { stringify as toYaml } from "yaml";
import { UsageError } from "../core/index.ts";
import type { ProgressStream } from "../eval/progress.ts";
import { STAGES, type PipelineConfig, type StageName } from "./config.ts";
import { openLog, resolvePython } from "./processes.ts";
import { PIPELINE_STAGES, pipelineSuite } from "./stages.ts";
import { renderSteps, runSteps, type ToolgymRunner } from "./steps.ts";
import { buildSummary, type PipelineSummary, type StageRecord } from "./summary.ts";

/** A stage is complete when this file exists in its directory; --resume skips it then. */
export const DONE_MARKER = "done.json";
export const STAGE_LOG = "log.txt";
export const CONFIG_FILE = "pipeline.json";
/** Every command a stage executed, one shell line each, as the dry run renders it (with real ports). */
export const COMMANDS_FILE = "commands.txt";

export interface PipelineOptions {
  config: PipelineConfig;
  out: string;
  resume?: boolean;
  only?: readonly StageName[];
  python?: string;
  /** Live progress: one line per stage event and step (each step's own output goes to the stage log). */
  progress?: ProgressStream & { write(text: string): unknown };
  quiet?: boolean;
  signal?: AbortSignal;
  /** Runs the `toolgym …` steps (the CLI passes its main()). */
  toolgym: ToolgymRunner;
}

export function parseStages(text: string): StageName[] {
  const names = text
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(STAGES as readonly string[]).includes(name))
      throw new UsageError({ code: "STAGE_UNKNOWN", message: `--only: unknown stage '${name}'; stages: ${STAGES.join(", ")}` });
  }
  if (names.length === 0) throw new UsageError({ code: "STAGE_UNKNOWN", message: `--only needs at least one stage of ${STAGES.join(", ")}` });
  return names as StageName[];
}

/** Every command and config the pipeline would run, as text (nothing is started). */
export function describePipeline(options: Pick<PipelineOptions, "config" | "out" | "python" | "only">): string {
  const context = { config: options.config, out: options.out, python: options.python ?? resolvePython() };
  const sections = [
    `# toolgym pipeline: preset ${options.config.preset} → ${options.out}`,
    options.config.description,
    "## config",
    toYaml(options.config).trimEnd(),
  ];
  sections.push("## evaluation suite", toYaml(pipelineSuite(options.config)).trimEnd());
  for (const stage of PIPELINE_STAGES) {
    if (options.only && !options.only.includes(stage.name)) continue;
    const skip = stage.skipReason(options.config);
    sections.push(`## ${stage.name}${skip ? ` (skipped: ${skip})` : ""}`);
    if (!skip)
      sections.push(
        renderSteps(stage.steps(context))
          .map((line) => (line.startsWith("# ") ? line : `$ ${line}`))
          .join("\n"),
      );
  }
  sections.push(`summary: ${join(options.out, "summary.json")}, card: ${join(options.out, "card.md")}`);
  return `${sections.join("\n\n")}\n`;
}

function readDone(directory: string): { seconds: number } | undefined {
  const path = join(directory, DONE_MARKER);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, "utf8")) as { seconds: number };
}

/** The stages whose outputs a stage reads (a stage its config skips is no prerequisite). */
const NEEDS: Record<StageName, StageName[]> = {
  data: [],
  sft: ["data"],
  baseline: ["data"],
  "eval-pre": ["sft"],
  grpo: ["data", "sft"],
  "eval-post": ["grpo", "baseline"],
  card: ["eval-pre"],
};

/**
 * With --only: every stage a chosen stage reads has finished in `out` or is chosen too, else a usage error
 * naming the stage to run first (instead of a traceback from the stage that found no model or data).
 */
export function checkStageOrder(options: Pick<PipelineOptions, "config" | "out" | "only">): void {
  if (!options.only) return;
  for (const stage of options.only) {
    for (const need of NEEDS[stage]) {
      const skipped = PIPELINE_STAGES.find((candidate) => candidate.name === need)?.skipReason(options.config);
      if (skipped || options.only.includes(need) || readDone(join(options.out, need))) continue;
      throw new UsageError({
        code: "STAGE_NOT_READY",
        message: `--only ${stage}: it reads the ${need} stage's output, which ${options.out} does not have; run --only ${need},${stage} (or the whole pipeline) first`,
      });
    }
  }
}

/** Refuses to mix two pipelines in one directory, and a resume with a different config. */
function prepareOutput(options: PipelineOptions): void {
  const configPath = join(options.out, CONFIG_FILE);
  const current = `${JSON.stringify(options.config, null, 2)}\n`;
  if (existsSync(configPath)) {
    // --only too: rerunning a stage of a finished run rewrites it, which only --resume may do.
    if (!options.resume)
      throw new UsageError({
        code: "PIPELINE_EXISTS",
        message: `${options.out} already holds a pipeline run; pass --resume to continue it (with --only to rerun those stages) or another --out`,
      });
    if (readFileSync(configPath, "utf8") !== current)
      throw new UsageError({
        code: "PIPELINE_CONFIG_CHANGED",
        message: `${options.out} was run with a different config (${configPath}); use the same preset/config to resume, or another --out`,
      });
  }
  mkdirSync(options.out, { recursive: true });
  writeFileSync(configPath, current);
}

/**
 * Runs the stages in order, each into `out/<stage>/` with its own log and a done marker, skipping the
 * stages a resumed run already finished; writes `out/summary.json` at the end, and also when a stage fails
 * (the failed stage says so), then rethrows.
 */
export async function runPipeline(options: PipelineOptions): Promise<PipelineSummary> {
  checkStageOrder(options);
  prepareOutput(options);
  const python = options.python ?? resolvePython();
  const records: StageRecord[] = [];
  const say = (text: string) => options.progress?.write(`[pipeline] ${text}\n`);
  const finish = () => {
    const summary = buildSummary({ config: options.config, out: options.out, stages: records });
    writeFileSync(join(options.out, "summary.json"), `${JSON.stringify(summary, null, 2)}\n`);
    return summary;
  };
  for (const stage of PIPELINE_STAGES) {
    const directory = join(options.out, stage.name);
    const done = readDone(directory);
    const skip = stage.skipReason(options.config);
    if (skip) {
      records.push({ name: stage.name, status: "skipped", seconds: 0 });
      say(`${stage.name}: skipped (${skip})`);
      continue;
    }
    if (options.only && !options.only.includes(stage.name)) {
      records.push({ name: stage.name, status: done ? "resumed" : "not run", seconds: done?.seconds ?? 0 });
      continue;
    }
    // A stage named by --only runs again even when done; the others a resumed run finished are kept.
    if (done && options.resume && !options.only) {
      records.push({ name: stage.name, status: "resumed", seconds: done.seconds });
      say(`${stage.name}: already complete, skipped (--resume)`);
      continue;
    }
    // A stage starts from a clean directory: a half-written one from a killed run is never mixed in.
    rmSync(directory, { recursive: true, force: true });
    mkdirSync(directory, { recursive: true });
    const log = openLog(join(directory, STAGE_LOG));
    const started = performance.now();
    say(`${stage.name}: started (log ${join(directory, STAGE_LOG)})`);
    try {
      const context = { config: options.config, out: options.out, python };
      const note = (text: string) => {
        log.write(`# ${text}\n`);
        say(`${stage.name}: ${text}`);
      };
      await runSteps(stage.steps(context), {
        log,
        toolgym: options.toolgym,
        record: join(directory, COMMANDS_FILE),
        note,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (error) {
      const seconds = (performance.now() - started) / 1000;
      records.push({ name: stage.name, status: "failed", seconds: Math.round(seconds * 10) / 10 });
      log.write(`# failed: ${error instanceof Error ? error.message : String(error)}\n`);
      log.end();
      await once(log, "close");
      const rest = STAGES.slice(STAGES.indexOf(stage.name) + 1);
      for (const name of rest) records.push({ name, status: "not run", seconds: 0 });
      finish();
      throw error;
    }
    const seconds = Math.round(((performance.now() - started) / 1000) * 10) / 10;
    log.end();
    await once(log, "close");
    writeFileSync(join(directory, DONE_MARKER), `${JSON.stringify({ seconds, finishedAt: new Date().toISOString() })}\n`);
    records.push({ name: stage.name, status: "done", seconds });
    say(`${stage.name}: done in ${seconds.toFixed(1)} s`);
  }
  return finish();
}
