import { readFileSync } from "node:fs";

/** One row of `toolgym sft` JSONL output, as the SFT identity tests read it. */
export interface OutputRow {
  input_ids: number[];
  labels: number[];
  assistant_masks: number[];
  metadata: { sft: { line: number } };
}

/** Every non-empty line of a JSONL file, parsed. */
export function readJsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}
