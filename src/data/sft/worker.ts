/**
 * Worker thread body: loads the template + tokenizer once, then turns batches of lines into rows
 * (serialised to JSONL here, off the main thread, when the output is JSONL). Started through
 * worker-entry.mjs, which registers tsx first.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { TransferListItem } from "node:worker_threads";
import { createSftRowBuilder, type LineBatch, type WorkerInit, type WorkerReply } from "./line-processor.ts";

const init = workerData as WorkerInit;
const processor = createSftRowBuilder(init);

const port = parentPort;
if (!port) throw new Error("worker.ts must run inside a worker thread");
port.on("message", (batch: LineBatch) => {
  const reply: WorkerReply = processor.processBatch(batch);
  const transfer: TransferListItem[] = [];
  for (const result of reply.results) if (result.kind === "row") transfer.push(result.row.inputIds.buffer as ArrayBuffer);
  if (reply.jsonl) transfer.push(reply.jsonl.buffer as ArrayBuffer);
  port.postMessage(reply, transfer);
});
port.postMessage({ ready: true });
