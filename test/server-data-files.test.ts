import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { prepareDataset, resolveDataSource } from "../src/envs/multihop/dataset.ts";
import { ENVIRONMENTS } from "../src/envs/registry.ts";
import { startServer, type RunningServer } from "../src/server/start-server.ts";
import { createSessionRequest as create } from "./support/server-requests.ts";

/**
 * Data files a client names (`toolgym serve --data-dir`), round two (issue 36 finding 8): read in linear time
 * whatever their shape, one read for concurrent loads of one file, and a failed load remembered.
 */
describe("toolgym serve loads a client-named data file once, in linear time (issue 36)", () => {
  let server: RunningServer;
  let work: string;
  let dataDir: string;

  before(async () => {
    work = mkdtempSync(join(tmpdir(), "toolgym-data-files-"));
    dataDir = join(work, "data");
    mkdirSync(dataDir);
    server = await startServer({ environments: ENVIRONMENTS, port: 0, resources: { dataDirectories: [dataDir] } });
  });
  after(async () => {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("refuses a 96 MB file without newlines without holding the loop", async () => {
    writeFileSync(join(dataDir, "flat.jsonl"), Buffer.alloc(96 * 1024 * 1024, 0x78));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const reply = await create(server.port, { env: "musique", config: { file: "flat.jsonl" } });
    delay.disable();
    rmSync(join(dataDir, "flat.jsonl"));
    assert.equal(reply.status, 422);
    assert.equal(reply.json.error?.code, "TASK_FAILED");
    // Searched again per 1 MiB chunk, the line took seconds (18 s for 128 MB); a bound ten times the 100 ms.
    assert.ok(delay.max / 1e6 < 1000, `the loop stalled for ${Math.round(delay.max / 1e6)} ms`);
  });

  it("shares one load between concurrent sessions naming one file", () => {
    const file = join(dataDir, "shared.jsonl");
    writeFileSync(file, readFileSync(new URL("../assets/multihop/musique_dev_sample.jsonl", import.meta.url)));
    const source = resolveDataSource("musique", { file });
    const first = prepareDataset(source);
    assert.equal(prepareDataset(source), first, "a second load while the first reads is the same load");
    return first;
  });

  it("remembers a failed load instead of reading the file again", async () => {
    const file = join(dataDir, "broken.jsonl");
    writeFileSync(file, "not json\n");
    assert.equal((await create(server.port, { env: "musique", config: { file: "broken.jsonl" } })).status, 422);
    // Fixed on disk: the server does not read it again (a client asking over and over cannot make it).
    writeFileSync(file, readFileSync(new URL("../assets/multihop/musique_dev_sample.jsonl", import.meta.url)));
    const again = await create(server.port, { env: "musique", config: { file: "broken.jsonl" } });
    assert.equal(again.status, 422);
    assert.match(String(again.json.error?.message), /DATA_RECORD_MALFORMED at line 1/);
  });
});
