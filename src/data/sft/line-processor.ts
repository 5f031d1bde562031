/** Batches of numbered lines → results; shared by the in-process path and the worker threads. */
import { ChatTemplate } from "../chat-template.ts";
import { SegmentTokenizer } from "../tokenizer.ts";
import { type SftLineResult, SftRowBuilder, type SftRowOptions, rowToJsonl } from "./build-row.ts";

export interface WorkerInit {
  modelDirectory: string;
  options: SftRowOptions;
  /** Serialise rows to JSONL text in the worker. */
  serialiseJsonl: boolean;
}

export interface LineBatch {
  id: number;
  lines: string[];
  /** The 1-based line number of each line in the input file. */
  lineNumbers: number[];
}

export type BatchResult = SftLineResult & { jsonl?: string };

export interface WorkerReply {
  id: number;
  results: BatchResult[];
  cache: { hits: number; misses: number };
}

export interface BatchProcessor {
  processBatch(batch: LineBatch): WorkerReply;
}

export function createSftRowBuilder(init: WorkerInit): BatchProcessor {
  const template = ChatTemplate.fromDirectory(init.modelDirectory);
  const tokenizer = SegmentTokenizer.fromDirectory(init.modelDirectory);
  const builder = new SftRowBuilder(template, tokenizer, init.options);
  let reported = { hits: 0, misses: 0 };
  return {
    processBatch(batch) {
      const results = batch.lines.map((text, index): BatchResult => {
        const result = builder.processLine(text, batch.lineNumbers[index]);
        return init.serialiseJsonl && result.kind === "row" ? { ...result, jsonl: rowToJsonl(result.row) } : result;
      });
      const cache = { hits: tokenizer.stats.hits - reported.hits, misses: tokenizer.stats.misses - reported.misses };
      reported = { hits: tokenizer.stats.hits, misses: tokenizer.stats.misses };
      return { id: batch.id, results, cache };
    },
  };
}
