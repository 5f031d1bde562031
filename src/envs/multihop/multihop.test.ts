import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { getPolicy } from "../registry.ts";
import { createRandom, type AnyEnvironment, type Trajectory } from "../../core/index.ts";
import { EpisodeDriver } from "../../rollout/episode-driver.ts";
import { runEpisode } from "../../rollout/run-episode.ts";
import { describeEnvironmentContract } from "../../testing/environment-contract.ts";
import { extractTextAnswer } from "./answer-text.ts";
import { musiqueEnvironment, wikiEnvironment, type MultihopTask } from "./index.ts";

// The default (search) mode runs in test/environment-contract.test.ts with every registered environment;
// the text modes are checked here.
describeEnvironmentContract(musiqueEnvironment, { config: { mode: "context" }, samples: 5 });
describeEnvironmentContract(wikiEnvironment, { config: { mode: "closed_book" }, samples: 5 });

async function run(env: AnyEnvironment, config: Record<string, unknown>, policyId: string, index: number): Promise<Trajectory> {
  const parsed = env.configSchema.parse(config);
  const task = env.generate({ split: "dev", seed: 0, index, config: parsed });
  const agent = getPolicy(env.id, policyId).create({ task, random: createRandom("test", index) });
  return runEpisode({ env, split: "dev", seed: 0, index, config: parsed, agent, task });
}

describe("musique / 2wiki environments", () => {
  it("maps task index i to example i mod N in file order; the seed does not matter", () => {
    const config = musiqueEnvironment.configSchema.parse({});
    const first = musiqueEnvironment.generate({ split: "dev", seed: 0, index: 0, config });
    assert.equal(first.example.id, "2hop__574419_270105");
    assert.equal(musiqueEnvironment.generate({ split: "dev", seed: 9, index: 40, config }).example.id, first.example.id);
    assert.equal(musiqueEnvironment.generate({ split: "dev", seed: 0, index: 41, config }).position, 1);
  });

  it("the oracle scores EM = F1 = 1 in every mode and records the mode in the diagnostics", async () => {
    for (const env of [musiqueEnvironment, wikiEnvironment]) {
      for (const mode of ["context", "search", "pool", "closed_book"]) {
        for (const index of [0, 17, 39]) {
          const trajectory = await run(env, { mode }, "oracle", index);
          assert.equal(trajectory.reward?.total, 1, `${env.id} ${mode} ${index}`);
          assert.equal(trajectory.reward?.components.em, 1);
          assert.equal(trajectory.diagnostics.mode, mode);
          assert.equal(trajectory.reward?.components.supporting_read, mode === "closed_book" ? 0 : 1, `${env.id} ${mode} ${index} supporting_read`);
        }
      }
    }
  });

  it("supporting_read is diagnostics only: an answer without reading still gets full F1", async () => {
    const config = wikiEnvironment.configSchema.parse({ mode: "search" });
    const task = wikiEnvironment.generate({ split: "dev", seed: 0, index: 2, config }) as MultihopTask;
    const episode = wikiEnvironment.start(task);
    episode.call("finish", { answer: task.example.answer });
    const reward = await episode.reward({ turnsUsed: 1, maxTurns: 12, endedBy: "finished" });
    assert.equal(reward.total, 1);
    assert.equal(reward.components.supporting_read, 0);
  });

  it("search returns snippets, read returns whole paragraphs, unknown titles get suggestions", () => {
    const config = musiqueEnvironment.configSchema.parse({ mode: "search" });
    const task = musiqueEnvironment.generate({ split: "dev", seed: 0, index: 0, config });
    const episode = musiqueEnvironment.start(task);
    const hits = JSON.parse(episode.call("search", { query: "Mountrail County courthouse Stanley", limit: 3 }).content) as {
      hits: Array<{ title: string; snippet: string }>;
    };
    assert.equal(hits.hits.length, 3);
    assert.equal(hits.hits[0]?.title, "Mountrail County Courthouse");
    const read = JSON.parse(episode.call("read", { title: "mountrail county courthouse" }).content) as { paragraphs: string[] };
    assert.match(read.paragraphs[0] as string, /^The Mountrail County Courthouse in Stanley/);
    const unknown = episode.call("read", { title: "Mountrail" });
    assert.equal(unknown.isError, true);
    assert.equal(unknown.errorKind, "unknown_title");
    const driver = new EpisodeDriver({ env: musiqueEnvironment, split: "dev", seed: 0, index: 0, config, task });
    assert.equal(driver.call({ name: "search", arguments: { query: "" } }).errorKind, "invalid_arguments");
  });

  it("pool mode searches the paragraphs of every loaded example", () => {
    const config = musiqueEnvironment.configSchema.parse({ mode: "pool" });
    const first = musiqueEnvironment.generate({ split: "dev", seed: 0, index: 0, config });
    const other = musiqueEnvironment.generate({ split: "dev", seed: 0, index: 5, config });
    const title = other.example.paragraphs.find((paragraph) => !first.example.paragraphs.some((own) => own.title === paragraph.title))?.title as string;
    const episode = musiqueEnvironment.start(first);
    assert.equal(episode.call("read", { title }).isError, false, `pool has '${title}'`);
    assert.equal(musiqueEnvironment.start({ ...first, mode: "search" }).call("read", { title }).isError, true);
  });

  it("pilots score low: the metric never rewards containment", async () => {
    for (const policy of ["answer_dump", "echo_question", "empty_answer", "guess_yes"]) {
      let total = 0;
      for (let index = 0; index < 40; index++) total += (await run(musiqueEnvironment, { mode: "context" }, policy, index)).reward?.total ?? 0;
      assert.ok(total / 40 < 0.1, `${policy}: ${total / 40}`);
    }
  });

  it("extracts the text answer: the last 'Answer:' line, else the whole reply, without <think> blocks", () => {
    assert.equal(extractTextAnswer("Paris"), "Paris");
    assert.equal(extractTextAnswer("  The capital is Paris.  "), "The capital is Paris.");
    assert.equal(extractTextAnswer("Answer: Lyon\nmore thought\n**Answer:** Paris"), "Paris");
    assert.equal(extractTextAnswer("<think>Answer: Lyon</think>\nanswer: Paris"), "Paris");
    assert.equal(extractTextAnswer("reasoning...</think>Stanley"), "Stanley");
  });

  it('`./bin/toolgym.js eval --env musique --config \'{"mode":"search"}\'` with the oracle scores EM = F1 = 1.0 on the samples', () => {
    const out = mkdtempSync(join(tmpdir(), "toolgym-multihop-eval-"));
    const binary = fileURLToPath(new URL("../../../bin/toolgym.js", import.meta.url));
    const result = spawnSync(process.execPath, [binary, "eval", "--env", "musique", "--config", '{"mode":"search"}', "--n", "40", "--quiet", "--out", out], {
      encoding: "utf8",
    });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^musique\b.*\b1\.000\s+\[1\.000, 1\.000\]/m);
    const files = readdirSync(out, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith("results.jsonl"));
    // Rows are the eval writer's records; the trajectory is either the row itself or nested in `info`.
    const rows = files.flatMap((name) =>
      readFileSync(join(out, name), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { info?: { trajectory?: Trajectory } } & Partial<Trajectory>),
    );
    assert.equal(rows.length, 40);
    for (const row of rows) {
      const trajectory = (row.info?.trajectory ?? row) as Trajectory;
      assert.equal(trajectory.reward?.components.f1, 1);
      assert.equal(trajectory.reward?.components.em, 1);
      assert.equal(trajectory.diagnostics.mode, "search");
    }
  });
});
