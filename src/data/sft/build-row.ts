/**
 * One JSONL line → one pretokenised SFT row, by the double-render recipe:
 * `prompt = render(context, add_generation_prompt=True)`, `full = render(context + [target])`; the prompt
 * ids must be a token-level prefix of the full ids; labels are −100 over the prompt and the full ids after
 * it (so `<think>`, reasoning, `</think>`, content or tool calls and `<|im_end|>\n` are supervised).
 */
import { pythonJsonDumps } from "../../python-semantics/index.ts";
import type { ChatTemplate } from "../chat-template.ts";
import type { SegmentTokenizer } from "../tokenizer.ts";
import { RowSkip, type SftMessage, type Tau2NormaliseOptions, normaliseTau2Line } from "./tau2-record.ts";
import { type TruncationInfo, fitToLength } from "./truncate.ts";

export interface SftRowOptions extends Tau2NormaliseOptions {
  maxTokens: number;
  /** Passed to the template as `enable_thinking` when set; left undefined otherwise (template default). */
  enableThinking?: boolean;
}

export interface SftRow {
  line: number;
  inputIds: Int32Array;
  /** Number of masked prompt tokens; labels are −100 before it and equal input ids from it. */
  promptLength: number;
  metadata: Record<string, unknown>;
  truncation: TruncationInfo;
}

export type SftLineResult = { kind: "row"; row: SftRow } | { kind: "skip"; line: number; reason: string; detail: string };

function firstDifference(prompt: number[], full: number[]): number {
  const limit = Math.min(prompt.length, full.length);
  for (let index = 0; index < limit; index++) if (prompt[index] !== full[index]) return index;
  return limit;
}

const edgeWhitespace = /^\s|\s$/;

/** Why a prefix check most likely failed, for the report (spec P1, P4). */
function prefixHint(options: SftRowOptions, context: readonly SftMessage[], target: SftMessage): string {
  const reasoning = target.reasoning_content ?? "";
  const content = typeof target.content === "string" ? target.content : "";
  if (context.at(-1)?.role === "assistant") return " (the history ends with an assistant turn, spec P2)";
  if (options.enableThinking === false && reasoning.trim() !== "") return " (enable_thinking=false with target reasoning, spec P1)";
  if (!options.normalizeWhitespace && (edgeWhitespace.test(reasoning) || /^\s/.test(content)))
    return " (whitespace at the prompt/target boundary, spec P4; --normalize-whitespace strips it)";
  return "";
}

export class SftRowBuilder {
  private readonly templateKwargs: Record<string, unknown>;

  constructor(
    private readonly template: ChatTemplate,
    private readonly tokenizer: SegmentTokenizer,
    private readonly options: SftRowOptions,
  ) {
    this.templateKwargs = options.enableThinking === undefined ? {} : { enable_thinking: options.enableThinking };
  }

  render(messages: readonly SftMessage[], addGenerationPrompt: boolean, tools?: unknown[]): string {
    return this.template.render(messages, { addGenerationPrompt, templateKwargs: this.templateKwargs, ...(tools ? { tools } : {}) });
  }

  /** Processes one line; never throws for bad data (the failure comes back as a skip with its reason). */
  processLine(text: string, line: number): SftLineResult {
    try {
      return { kind: "row", row: this.build(text, line) };
    } catch (error) {
      if (error instanceof RowSkip) return { kind: "skip", line, reason: error.reason, detail: error.message };
      return { kind: "skip", line, reason: "render-error", detail: error instanceof Error ? error.message : String(error) };
    }
  }

  private build(text: string, line: number): SftRow {
    const example = normaliseTau2Line(text, this.options);
    const { target, tools } = example;
    let fullIds: number[] = [];
    const fullLength = (context: SftMessage[]) => {
      fullIds = this.tokenizer.encode(this.render([...context, target], false, tools));
      return fullIds.length;
    };
    const fit = fitToLength(example.context, this.options.maxTokens, fullLength, (payload) => this.tokenizer.encode(payload).length);
    // the last measured render is the accepted context's (fitToLength returns on the first that fits)
    const promptIds = this.tokenizer.encode(this.render(fit.context, true, tools));
    const difference = firstDifference(promptIds, fullIds);
    if (difference < promptIds.length) {
      const hint = prefixHint(this.options, fit.context, target);
      const promptText = JSON.stringify(this.tokenizer.decode(promptIds.slice(difference, difference + 8)));
      const fullText = JSON.stringify(this.tokenizer.decode(fullIds.slice(difference, difference + 8)));
      throw new RowSkip(
        "prefix-mismatch",
        `prompt tokens are not a prefix of the full render at token ${difference} of ${promptIds.length}: prompt ${promptText} vs full ${fullText}${hint}`,
      );
    }
    if (fullIds.length === promptIds.length) throw new RowSkip("empty-labels", "the target renders to no tokens");
    return { line, inputIds: Int32Array.from(fullIds), promptLength: promptIds.length, metadata: example.metadata, truncation: fit.truncation };
  }
}

/** Labels and assistant mask of a row (−100 / 0 over the prompt). */
export function rowLabels(row: SftRow): { labels: Int32Array; assistantMasks: Int32Array } {
  const labels = new Int32Array(row.inputIds.length);
  const assistantMasks = new Int32Array(row.inputIds.length);
  labels.fill(-100, 0, row.promptLength);
  for (let index = row.promptLength; index < row.inputIds.length; index++) {
    labels[index] = row.inputIds[index];
    assistantMasks[index] = 1;
  }
  return { labels, assistantMasks };
}

/** Row metadata as written: the source metadata plus `sft` (source line, token counts, truncation). */
export function outputMetadata(row: SftRow): Record<string, unknown> {
  const sft = { line: row.line, tokens: row.inputIds.length, label_tokens: row.inputIds.length - row.promptLength, truncation: row.truncation };
  return { ...row.metadata, sft };
}

function joinInts(values: ArrayLike<number>): string {
  let text = "";
  for (let index = 0; index < values.length; index++) text += index === 0 ? `${values[index]}` : `,${values[index]}`;
  return text;
}

/** One JSONL output line (without the newline), `{input_ids, labels, assistant_masks, metadata}`. */
export function rowToJsonl(row: SftRow): string {
  const ids = joinInts(row.inputIds);
  const target = joinInts(row.inputIds.subarray(row.promptLength));
  const prompt = row.promptLength;
  const maskedLabels = prompt === 0 ? target : `${"-100,".repeat(prompt)}${target}`;
  const masks = `${"0,".repeat(prompt)}${"1,".repeat(row.inputIds.length - prompt - 1)}1`;
  return `{"input_ids": [${ids}], "labels": [${maskedLabels}], "assistant_masks": [${masks}], "metadata": ${pythonJsonDumps(outputMetadata(row))}}`;
}
