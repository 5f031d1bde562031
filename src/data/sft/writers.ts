/**
 * Row writers. JSONL: one `{input_ids, labels, assistant_masks, metadata}` object per line. Parquet
 * (hyparquet-writer, pure JS): an explicit schema with `LIST<INT32>` token columns and `metadata` as JSON
 * text, written in row groups so memory stays bounded; `datasets.load_dataset("parquet", …)` reads it.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { once } from "node:events";
import { ParquetWriter, fileWriter } from "hyparquet-writer";
import { pythonJsonDumps } from "../../python-semantics/index.ts";
import { type SftRow, outputMetadata, rowLabels, rowToJsonl } from "./build-row.ts";

export type SftOutputFormat = "jsonl" | "parquet";

export interface SftRowWriter {
  write(row: SftRow): Promise<void>;
  /** Rows already serialised in this writer's format (JSONL lines from a worker); only the JSONL writer takes them. */
  writeSerialised?(bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export function outputFormatOf(path: string): SftOutputFormat | undefined {
  if (path.endsWith(".jsonl")) return "jsonl";
  if (path.endsWith(".parquet")) return "parquet";
  return undefined;
}

class JsonlRowWriter implements SftRowWriter {
  private readonly stream: WriteStream;
  constructor(path: string) {
    this.stream = createWriteStream(path);
  }
  async write(row: SftRow): Promise<void> {
    if (!this.stream.write(`${rowToJsonl(row)}\n`)) await once(this.stream, "drain");
  }
  async writeSerialised(bytes: Uint8Array): Promise<void> {
    if (!this.stream.write(bytes)) await once(this.stream, "drain");
  }
  async close(): Promise<void> {
    this.stream.end();
    await once(this.stream, "finish");
  }
}

function listColumn(name: string) {
  return [
    { name, repetition_type: "REQUIRED" as const, num_children: 1, converted_type: "LIST" as const },
    { name: "list", repetition_type: "REPEATED" as const, num_children: 1 },
    { name: "element", type: "INT32" as const, repetition_type: "REQUIRED" as const },
  ];
}

const parquetSchema = [
  { name: "root", num_children: 4 },
  ...listColumn("input_ids"),
  ...listColumn("labels"),
  ...listColumn("assistant_masks"),
  { name: "metadata", type: "BYTE_ARRAY" as const, converted_type: "UTF8" as const, repetition_type: "REQUIRED" as const },
];

class ParquetRowWriter implements SftRowWriter {
  private readonly writer: ParquetWriter;
  private pending: { inputIds: number[][]; labels: number[][]; masks: number[][]; metadata: string[] } = { inputIds: [], labels: [], masks: [], metadata: [] };

  constructor(
    path: string,
    private readonly rowGroupSize = 256,
  ) {
    this.writer = new ParquetWriter({ writer: fileWriter(path), schema: parquetSchema });
  }

  async write(row: SftRow): Promise<void> {
    const { labels, assistantMasks } = rowLabels(row);
    this.pending.inputIds.push(Array.from(row.inputIds));
    this.pending.labels.push(Array.from(labels));
    this.pending.masks.push(Array.from(assistantMasks));
    this.pending.metadata.push(pythonJsonDumps(outputMetadata(row)));
    if (this.pending.metadata.length >= this.rowGroupSize) await this.flush();
  }

  private async flush(): Promise<void> {
    const { inputIds, labels, masks, metadata } = this.pending;
    if (metadata.length === 0) return;
    this.pending = { inputIds: [], labels: [], masks: [], metadata: [] };
    await this.writer.write({
      columnData: [
        { name: "input_ids", data: inputIds },
        { name: "labels", data: labels },
        { name: "assistant_masks", data: masks },
        { name: "metadata", data: metadata },
      ],
      rowGroupSize: metadata.length,
    });
  }

  async close(): Promise<void> {
    await this.flush();
    await this.writer.finish();
  }
}

export function createRowWriter(path: string, format: SftOutputFormat): SftRowWriter {
  return format === "jsonl" ? new JsonlRowWriter(path) : new ParquetRowWriter(path);
}
