import assert from "node:assert/strict";
import { readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parquetReadObjects } from "hyparquet";
import { runCli } from "./support/run-cli.ts";
import { mockEnvironment } from "../src/envs/mock/index.ts";
import { createProtocol } from "../src/server/protocol.ts";
import { ask } from "../src/testing/protocol-client.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";

async function quietly(run: Promise<{ code: number }>): Promise<number> {
  return (await run).code;
}

describe("toolgym dataset", () => {
  it("writes JSONL and Parquet prompt rows that rebuild the same task on the server", async () => {
    const directory = mkdtempSync(join(tmpdir(), "toolgym-dataset-"));
    const jsonl = join(directory, "prompts.jsonl");
    const parquet = join(directory, "prompts.parquet");
    assert.equal(await quietly(runCli(["dataset", "mock", "--split", "train", "--n", "12", "--seed", "9", "--config", '{"keys": 7}', "--out", jsonl])), 0);
    assert.equal(await quietly(runCli(["dataset", "mock", "--split", "train", "--n", "12", "--seed", "9", "--config", '{"keys": 7}', "--out", parquet])), 0);
    const rows = readFileSync(jsonl, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.equal(rows.length, 12);
    const buffer = readFileSync(parquet);
    const fromParquet = await parquetReadObjects({ file: buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) });
    assert.deepEqual(
      fromParquet.map((row) => ({ ...row, seed: Number(row.seed), index: Number(row.index) })),
      rows,
    );
    const protocol = createProtocol({ environments: ENVIRONMENTS });
    for (const row of rows.slice(0, 4)) {
      assert.deepEqual(Object.keys(row), ["prompt", "env", "env_version", "split", "seed", "index", "config", "prompt_hash"]);
      assert.equal(row.env_version, mockEnvironment.version);
      assert.match(row.prompt_hash, /^[0-9a-f]{64}$/);
      assert.equal(row.config, '{"keys":7}');
      const task = mockEnvironment.generate({ split: "train", seed: 9, index: row.index, config: { keys: 7 } });
      assert.deepEqual(row.prompt, mockEnvironment.start(task).messages);
      const created = await ask(protocol, "POST", "/sessions", { env: row.env, split: row.split, seed: row.seed, index: row.index, config: row.config });
      assert.deepEqual(created.json.messages, row.prompt, "reset(**row) rebuilds the row's task");
    }
  });

  it("rejects a bad split, config or output extension with a usage error", async () => {
    const errors: string[] = [];
    for (const argv of [
      ["dataset", "mock", "--split", "nope", "--n", "2", "--out", "/tmp/x.jsonl"],
      ["dataset", "mock", "--config", '{"bad": 1}', "--n", "2", "--out", "/tmp/x.jsonl"],
      ["dataset", "mock", "--n", "2", "--out", "/tmp/x.csv"],
    ]) {
      const result = await runCli(argv);
      assert.equal(result.code, 2);
      errors.push(result.stderr);
    }
    assert.match(errors.join(""), /unknown split 'nope'/);
    assert.match(errors.join(""), /bad/);
    assert.match(errors.join(""), /\.jsonl or \.parquet/);
  });
});
