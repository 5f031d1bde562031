import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { PipelineConfig } from "./config.ts";
import type { Step } from "./steps.ts";

/** Where the Tau2 card's data goes: the scripted conversations' exports, their concatenation, a hub model's tokenizer. */
export const tau2DataPaths = (out: string) => ({
  exports: join(out, "data", "tau2-sft"),
  lines: join(out, "data", "tau2-sft.jsonl"),
  tokenizer: join(out, "data", "base-tokenizer"),
});

/** The run id the scripted conversations are written under, so the export step can name the run directory. */
const RUN_ID = "tau2-sft";

/**
 * The Tau2 card's SFT lines: each source's split played by each scripted policy (`toolgym eval`, with the
 * scripted user), each run exported with `--format tau2-sft` (one AReaL-layout line per agent turn), and the
 * exports concatenated into the one file `toolgym sft tau2` reads. A user-supplied AReaL file needs none of it.
 */
export function tau2ConversationSteps(config: PipelineConfig, out: string, trajectories: string): Step[] {
  const tau2 = config.data.tau2;
  if (!tau2 || tau2.file !== undefined) return [];
  const paths = tau2DataPaths(out);
  const steps: Step[] = [];
  const exports: string[] = [];
  for (const source of tau2.sources)
    for (const policy of config.data.policies) {
      const args = ["eval", "--env", source.env, "--agent", policy, "--split", source.split, "--n", String(source.n)];
      if (source.trials > 1) args.push("--num-trials", String(source.trials));
      args.push("--config", JSON.stringify(source.config), "--out", trajectories, "--run-id", RUN_ID, "--quiet");
      const plays = `${source.n} tasks${source.trials > 1 ? ` × ${source.trials} trials` : ""}`;
      steps.push({ kind: "toolgym", args, note: `scripted conversations: ${policy} on ${source.env} ${source.split} (${plays}, scripted user)` });
      const exported = join(paths.exports, `${source.env}--${policy}.jsonl`);
      exports.push(exported);
      const run = join(trajectories, `${source.env}--scripted-${policy}`, RUN_ID);
      steps.push({ kind: "toolgym", args: ["export", run, "--format", "tau2-sft", "--out", exported], note: `${source.env} ${policy}: AReaL tau2 SFT lines` });
    }
  steps.push({
    kind: "library",
    note: `the ${exports.length} exports concatenated into ${paths.lines}`,
    run: () => {
      mkdirSync(dirname(paths.lines), { recursive: true });
      writeFileSync(paths.lines, "");
      for (const file of exports) appendFileSync(paths.lines, readFileSync(file));
    },
  });
  return steps;
}

/**
 * `toolgym sft tau2` over the Tau2 lines (the exports' or the user's AReaL file) with the base model's
 * tokenizer and chat template: one pretokenised row per assistant turn, double-rendered and prefix-checked.
 */
export function tau2RowsStep(config: PipelineConfig, options: { out: string; tokenizer: string; rows: string }): Step {
  const tau2 = config.data.tau2!;
  const input = tau2.file ? (tau2.hub ? join(options.out, "data", tau2.file) : tau2.file) : tau2DataPaths(options.out).lines;
  const args = ["sft", "tau2", input, "--model-dir", options.tokenizer, "--out", options.rows, "--max-tokens", String(config.data.maxTokens)];
  if (tau2.enableThinking !== null) args.push("--enable-thinking", String(tau2.enableThinking));
  const thinking = tau2.enableThinking === null ? "" : `, thinking ${tau2.enableThinking ? "enabled" : "off"}`;
  return { kind: "toolgym", args, note: `SFT rows as \`sft tau2\` builds them (${config.data.maxTokens}-token context${thinking})` };
}

/** The `hf` CLI installed beside the Python that has the libraries, else the one on PATH. */
function hfCommand(python: string): string {
  const beside = join(dirname(python), "hf");
  return existsSync(beside) ? beside : "hf";
}

/** A hub model's tokenizer files and chat template, which `toolgym sft tau2` reads from a directory. */
export function hubTokenizerStep(python: string, model: string, out: string): Step {
  const argv = [
    hfCommand(python),
    "download",
    model,
    "--include",
    "tokenizer*",
    "*.jinja",
    "special_tokens_map.json",
    "--local-dir",
    tau2DataPaths(out).tokenizer,
  ];
  return { kind: "command", argv, note: `${model}'s tokenizer and chat template (the rows are built with them)` };
}

/** The user's AReaL file from its Hugging Face dataset repository, when the config names one. */
export function hubDatasetSteps(config: PipelineConfig, python: string, out: string): Step[] {
  const tau2 = config.data.tau2;
  if (!tau2?.file || !tau2.hub) return [];
  const argv = [hfCommand(python), "download", tau2.hub, tau2.file, "--repo-type", "dataset", "--local-dir", join(out, "data")];
  return [{ kind: "command", argv, note: `${tau2.file} of the dataset ${tau2.hub}` }];
}
