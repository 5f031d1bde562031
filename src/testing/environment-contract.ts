import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EnvConfigError, ToolgymError, createRandom, type AnyEnvironment, type Episode, type JsonValue, type ToolResult } from "../core/index.ts";

export interface ContractOptions {
  /** A config that is valid for the environment (defaults are filled in by the schema). Default `{}`. */
  config?: unknown;
  /** Number of tasks to check. */
  samples?: number;
  /** Runs the environment's audit (oracle high, pilots low) on this many tasks; 0 leaves it out. */
  auditN?: number;
}

/** Audit size when the contract runs over every registered environment (test/environment-contract.test.ts). */
export const CONTRACT_AUDIT_N = 40;

/** Tasks each audit policy plays for the watch's check: a handful (a pilot must trip a signature on at least one). */
const WATCH_TASKS = 6;

/** Shortest solution string checked when an environment names no secrets (shorter ones match by chance). */
const MIN_SECRET_LENGTH = 4;

/** Every string leaf of a JSON value (object keys excluded). */
function stringLeaves(value: JsonValue, found: string[] = []): string[] {
  if (typeof value === "string") found.push(value);
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, found);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) stringLeaves(item as JsonValue, found);
  return found;
}

/** Every non-empty array or object inside a JSON value, the value itself included. */
function subtrees(value: JsonValue, found: JsonValue[] = []): JsonValue[] {
  if (Array.isArray(value)) {
    if (value.length > 0) found.push(value);
    for (const item of value) subtrees(item, found);
  } else if (value !== null && typeof value === "object") {
    if (Object.keys(value).length > 0) found.push(value);
    for (const item of Object.values(value)) subtrees(item as JsonValue, found);
  }
  return found;
}

const junkText = ["", "{not json", "no such action please", "\u0000\u{1F600} <|im_end|>"];

function isResult(result: ToolResult): void {
  assert.equal(typeof result.content, "string", "a result's content is a string");
  assert.equal(typeof result.isError, "boolean", "a result says whether it is an error");
}

/** Checks a reward breakdown's shape: a finite total (or null when a component failed) and numeric components. */
function checkReward(reward: Awaited<ReturnType<Episode["reward"]>>): void {
  assert.ok(reward.total === null || Number.isFinite(reward.total), `reward total ${String(reward.total)} is a number or null`);
  for (const [name, value] of Object.entries(reward.components)) {
    assert.ok(value === null || Number.isFinite(value), `component ${name} is ${String(value)}`);
  }
}

/** One audit policy of `env` under `config` on `tasks` tasks: how many of its episodes showed a signature, and how many each signature. */
export async function watchTrips(
  env: AnyEnvironment,
  config: unknown,
  policyId: string,
  tasks = WATCH_TASKS,
): Promise<{ found: Map<string, number>; episodes: number }> {
  const { getPolicy } = await import("../envs/registry.ts");
  const { runEpisode } = await import("../rollout/run-episode.ts");
  const { trajectoryWatchEpisode, watchEpisode } = await import("../audit/signatures.ts");
  const split = env.defaultSplit;
  const found = new Map<string, number>();
  let episodes = 0;
  for (let index = 0; index < tasks; index++) {
    const shared = env.generate({ split, seed: 3, index, config });
    const agent = getPolicy(env.id, policyId).create({ task: shared, random: createRandom("watch", policyId, index) });
    const trajectory = await runEpisode({ env, split, seed: 3, index, config, agent, task: shared });
    const watch = watchEpisode(env, trajectoryWatchEpisode(trajectory), shared);
    assert.ok(watch, `${policyId} on task ${index}: a scored episode has a watch record`);
    for (const name of watch.signatures) found.set(name, (found.get(name) ?? 0) + 1);
    if (watch.signatures.length > 0) episodes++;
  }
  return { found, episodes };
}

/** Every pilot of the audit trips at least one signature under `config`; the oracle shows them less often than the pilots. */
async function checkWatch(env: AnyEnvironment, config: unknown): Promise<void> {
  if (!env.audit) return;
  assert.ok(env.watch, "the environment declares no watch: gaming signatures beside its pilots (docs/training.md, 'The watch')");
  const names = env.watch.signatures.map((signature) => signature.name);
  assert.equal(new Set(names).size, names.length, `signature names are unique: ${names.join(", ")}`);
  const { getPolicy } = await import("../envs/registry.ts");
  const pilots = env.audit.policies.filter((id) => getPolicy(env.id, id).kind === "pilot");
  let pilotEpisodes = 0;
  for (const pilot of pilots) {
    const { found, episodes } = await watchTrips(env, config, pilot);
    assert.ok(found.size > 0, `pilot ${pilot} trips none of ${env.id}'s signatures (${names.join(", ")}) on ${WATCH_TASKS} tasks`);
    pilotEpisodes += episodes;
  }
  const oracle = env.audit.policies.find((id) => getPolicy(env.id, id).kind === "genuine");
  if (oracle && pilots.length > 0) {
    const { episodes } = await watchTrips(env, config, oracle);
    assert.ok(
      episodes / WATCH_TASKS < pilotEpisodes / (WATCH_TASKS * pilots.length),
      `${oracle} shows signatures in ${episodes} of ${WATCH_TASKS} episodes, as often as the pilots (${pilotEpisodes} of ${WATCH_TASKS * pilots.length})`,
    );
  }
}

/**
 * The contract every registered environment passes: determinism, config validation errors, no hidden
 * data in the public view, well-formed tools or text replies with honest `done` flags, tasks that their
 * episodes leave unchanged, and (with `auditN`) oracle high and pilots low through the environment's audit.
 */
export function describeEnvironmentContract(env: AnyEnvironment, options: ContractOptions = {}): void {
  const config: unknown = env.configSchema.parse(options.config ?? {});
  const samples = options.samples ?? 20;
  const label = options.config === undefined ? env.id : `${env.id} ${JSON.stringify(options.config)}`;
  const task = (seed: number, index: number): unknown => env.generate({ split: env.defaultSplit, seed, index, config });

  describe(`environment contract: ${label}`, () => {
    it("generates identical tasks for identical addresses, on every split", () => {
      for (const split of env.splits) {
        for (let index = 0; index < samples; index++) {
          const first = env.generate({ split, seed: 7, index, config });
          const second = env.generate({ split, seed: 7, index, config });
          assert.equal(JSON.stringify(first), JSON.stringify(second), `${split} task ${index}`);
        }
      }
    });

    it("gives different tasks for different indices", () => {
      const seen = new Set<string>();
      for (let index = 0; index < samples; index++) seen.add(JSON.stringify(env.publicView(task(7, index))));
      assert.ok(seen.size >= Math.min(samples, 2), `only ${seen.size} distinct tasks in ${samples}`);
    });

    it("rejects an unknown config key with EnvConfigError naming the key", async () => {
      const { parseConfig } = await import("../core/config.ts");
      assert.throws(
        () => parseConfig(env.id, env.configSchema, { noSuchKey: 1 }),
        (error: unknown) => ToolgymError.isInstance(error) && error instanceof EnvConfigError && error.message.includes("noSuchKey"),
      );
    });

    it("keeps the hidden solution out of the public view (and the named secrets out of the prompt)", () => {
      let checked = 0;
      for (let index = 0; index < samples; index++) {
        const generated = task(11, index);
        const publicView = JSON.stringify(env.publicView(generated));
        const solution = env.solution(generated);
        // The environment's named secrets (answers, hidden ids) are checked against the prompt too; without
        // them, no string (of a few characters or more), array or object of the solution may appear in the view.
        const secrets = env.secrets
          ? env.secrets(generated)
          : [...stringLeaves(solution).filter((value) => value.length >= MIN_SECRET_LENGTH), ...subtrees(solution).map((part) => JSON.stringify(part))];
        const visible = env.secrets ? publicView + JSON.stringify(env.start(generated).messages) : publicView;
        for (const secret of secrets) {
          assert.ok(!visible.includes(secret), `task ${index}: the hidden '${secret.slice(0, 120)}' is visible`);
          checked++;
        }
      }
      assert.ok(checked > 0, "no solution value was checked: solution() or secrets() returns nothing to hide");
    });

    it("offers tools with JSON Schema object parameters and descriptions (text environments offer none)", () => {
      const episode = env.start(task(1, 0));
      for (const tool of episode.tools) {
        assert.equal(tool.type, "function");
        assert.ok(tool.function.description.length > 10, `${tool.function.name} needs a description`);
        assert.equal(tool.function.parameters.type, "object");
      }
      if (episode.protocol === "tools") assert.ok(episode.tools.length > 0, "a tools environment offers at least one tool");
      else assert.equal(typeof episode.reply, "function", "a text environment handles replies");
      assert.ok(episode.messages.length > 0, "the episode starts from a prompt");
      assert.equal(episode.done, false, "a new episode is not done");
    });

    it("starts episodes without accessors of their own (getters on a prototype: see _kit/episode-parts.ts)", () => {
      for (const index of [0, 1]) {
        const episode = env.start(task(1, index));
        for (const name of ["done", "truncated"]) {
          const own = Object.getOwnPropertyDescriptor(episode, name);
          assert.ok(!own || !("get" in own), `episode.${name} is an own getter: each episode then gets its own hidden class`);
        }
      }
    });

    it("answers nonsense with error results, never a throw, and its done flag matches the episode's", async () => {
      const episode = env.start(task(1, 0));
      if (episode.protocol === "tools") {
        // Through the episode driver, which owns tool calls: lookup, argument checks and the format-error ledger.
        const { EpisodeDriver } = await import("../rollout/episode-driver.ts");
        const driver = new EpisodeDriver({ env, split: env.defaultSplit, seed: 1, index: 0, config, task: task(1, 0) });
        const name = driver.episode.tools[0]?.function.name ?? "x";
        const junk: Array<[string, unknown]> = [
          ["no_such_tool", {}],
          ["", null],
          [name, { wrong: [1, 2] }],
          [name, "string"],
        ];
        for (const [tool, args] of junk) {
          const result = driver.call({ name: tool, arguments: args });
          isResult(result);
          assert.equal(result.isError, true, `${tool}(${JSON.stringify(args)}) is an error`);
          assert.equal(Boolean(result.done), driver.episode.done);
        }
        // Each refused call is one format error (an environment with its own argument policy answers in its own terms).
        if (env.argumentPolicy !== "environment") assert.equal(driver.formatErrors.length, junk.length, "each junk call counted once");
        return;
      }
      const reply = (episode.reply as NonNullable<Episode["reply"]>).bind(episode);
      const result = await reply(junkText[0] as string);
      isResult(result);
      assert.equal(Boolean(result.done), episode.done);
    });

    it("ends a text episode within its turn limit whatever the replies, with a well-formed reward", async () => {
      const generated = task(2, 0);
      const episode = env.start(generated);
      const maxTurns = env.maxTurns(generated);
      let turns = 0;
      if (episode.protocol === "text") {
        const reply = (episode.reply as NonNullable<Episode["reply"]>).bind(episode);
        while (!episode.done && turns < maxTurns) {
          const result = await reply(junkText[turns % junkText.length] as string);
          turns++;
          isResult(result);
          assert.equal(Boolean(result.done), episode.done, `reply ${turns}: the result's done flag is the episode's`);
        }
        assert.equal(episode.done, true, `still running after ${maxTurns} replies (its maxTurns)`);
      }
      checkReward(await episode.reward({ turnsUsed: turns, maxTurns, endedBy: episode.done ? "finished" : "max_turns", formatErrors: turns }));
    });

    it("leaves a task as generated after every policy of its audit plays it (the audit and sampled runs share one)", async () => {
      if (!env.audit) return;
      const { getPolicy } = await import("../envs/registry.ts");
      const { runEpisode } = await import("../rollout/run-episode.ts");
      const split = env.defaultSplit;
      const play = async (policyId: string, index: number, shared: unknown) => {
        const agent = getPolicy(env.id, policyId).create({ task: shared, random: createRandom("contract", policyId, index) });
        return (await runEpisode({ env, split, seed: 5, index, config, agent, task: shared })).reward?.total;
      };
      for (const index of [0, 1]) {
        const shared = env.generate({ split, seed: 5, index, config });
        const before = JSON.stringify(shared);
        const totals: Array<number | null | undefined> = [];
        for (const policyId of env.audit.policies) totals.push(await play(policyId, index, shared));
        assert.equal(JSON.stringify(shared), before, `task ${index} changed after its episodes`);
        // Played again, on the task every policy played and on a fresh copy: the same rewards.
        for (const [position, policyId] of env.audit.policies.entries()) {
          const fresh = await play(policyId, index, env.generate({ split, seed: 5, index, config }));
          assert.equal(
            fresh,
            totals[position],
            `${policyId} on task ${index}: ${String(totals[position])} on the shared task, ${String(fresh)} on a fresh one`,
          );
          assert.equal(await play(policyId, index, shared), totals[position], `${policyId} on task ${index}, played twice`);
        }
      }
    });

    // The watch under the contract's config and, on the default one, under every config the audit names (modes,
    // protocols, reward variants): each config's pilots trip a signature, its oracle shows them less often.
    const watchConfigs: Array<{ label: string; config: unknown }> = [{ label: "", config }];
    if (options.config === undefined)
      for (const other of env.audit?.configs ?? []) watchConfigs.push({ label: ` under ${JSON.stringify(other)}`, config: env.configSchema.parse(other) });
    for (const watched of watchConfigs)
      it(`has a watch whose signatures each of its audit's pilots trips${watched.label} (pilots on ${WATCH_TASKS} tasks)`, async () => {
        await checkWatch(env, watched.config);
      });

    const auditN = options.auditN ?? 0;
    if (auditN > 0) {
      it(`passes its audit on ${auditN} tasks (oracle high, pilots low)`, async () => {
        assert.ok(env.audit, "the environment defines no audit (its oracle and reward-hacking pilots)");
        const { runAudit } = await import("../audit/run-audit.ts");
        const result = await runAudit({ env, spec: env.audit, n: auditN, seed: 3, config });
        assert.deepEqual(result.failures, []);
        assert.equal(result.verdict, "pass");
      });
    }
  });
}
