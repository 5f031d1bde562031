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

export interface WorkerReply {
  id: number;
  results: SftLineResult[];
  /**
   * The batch's rows as JSONL (UTF-8, one line each, in order) when the output is JSONL. Bytes, not a
   * string: a worker transfers the buffer, so the main thread never copies or decodes row text.
   */
  jsonl?: Uint8Array;
  cache: { hits: number; misses: number };
}

export interface BatchProcessor {
  processBatch(batch: LineBatch): WorkerReply;
}

// TextEncoder output owns its ArrayBuffer (Buffer.from may share a pooled one, which must not be transferred)
const utf8 = new TextEncoder();

export function createSftRowBuilder(init: WorkerInit): BatchProcessor {
  const template = ChatTemplate.fromDirectory(init.modelDirectory);
  const tokenizer = SegmentTokenizer.fromDirectory(init.modelDirectory);
  const builder = new SftRowBuilder(template, tokenizer, init.options);
  let reported = { hits: 0, misses: 0 };
  return {
    processBatch(batch) {
      const results = batch.lines.map((text, index) => builder.processLine(text, batch.lineNumbers[index]));
      const cache = { hits: tokenizer.stats.hits - reported.hits, misses: tokenizer.stats.misses - reported.misses };
      reported = { hits: tokenizer.stats.hits, misses: tokenizer.stats.misses };
      if (!init.serialiseJsonl) return { id: batch.id, results, cache };
      let text = "";
      for (const result of results) if (result.kind === "row") text += `${rowToJsonl(result.row)}\n`;
      return { id: batch.id, results, jsonl: utf8.encode(text), cache };
    },
  };
}
