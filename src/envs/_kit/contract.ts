import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EnvConfigError, ToolgymError, type AnyEnvironment } from "../../core/index.ts";

export interface ContractOptions {
  env: AnyEnvironment;
  /** A config that is valid for the environment (defaults are filled in by the schema). */
  config?: unknown;
  /** An object with a key the schema must reject, e.g. `{ noSuchKey: 1 }`. */
  invalidConfig?: unknown;
  /** Strings that must never appear in the public view or the prompt (answers, hidden ids...). */
  secrets?: (task: unknown) => string[];
  /** Number of tasks to check. */
  samples?: number;
  /** Runs the environment's audit (oracle high, pilots low) on this many tasks; 0 skips it. */
  auditN?: number;
}

/**
 * The contract every registered environment passes: determinism, config validation errors, no hidden
 * data in the public view, oracle high and pilots low (through the audit).
 */
export function describeEnvironmentContract(options: ContractOptions): void {
  const { env } = options;
  const config = env.configSchema.parse(options.config ?? {});
  const samples = options.samples ?? 20;
  describe(`environment contract: ${env.id}`, () => {
    it("generates identical tasks for identical addresses", () => {
      for (const split of env.splits) {
        for (let index = 0; index < samples; index++) {
          const first = env.generate({ split, seed: 7, index, config });
          const second = env.generate({ split, seed: 7, index, config });
          assert.equal(JSON.stringify(first), JSON.stringify(second));
        }
      }
    });
    it("gives different tasks for different indices", () => {
      const seen = new Set<string>();
      for (let index = 0; index < samples; index++) seen.add(JSON.stringify(env.publicView(env.generate({ split: env.defaultSplit, seed: 7, index, config }))));
      assert.ok(seen.size >= Math.min(samples, 2), `only ${seen.size} distinct tasks in ${samples}`);
    });
    it("rejects an invalid config with EnvConfigError naming the key", async () => {
      const { parseConfig } = await import("../../core/config.ts");
      const invalid = options.invalidConfig ?? { noSuchKey: 1 };
      assert.throws(
        () => parseConfig(env.id, env.configSchema, invalid),
        (error: unknown) =>
          ToolgymError.isInstance(error) && error instanceof EnvConfigError && error.message.includes(Object.keys(invalid as object)[0] as string),
      );
    });
    it("keeps hidden data out of the public view and the prompt", () => {
      if (!options.secrets) return;
      for (let index = 0; index < samples; index++) {
        const task = env.generate({ split: env.defaultSplit, seed: 11, index, config });
        const visible = JSON.stringify(env.publicView(task)) + JSON.stringify(env.start(task).messages);
        for (const secret of options.secrets(task)) assert.ok(!visible.includes(secret), `secret '${secret}' is visible in task ${index}`);
      }
    });
    it("has tools with JSON Schema object parameters and descriptions", () => {
      const episode = env.start(env.generate({ split: env.defaultSplit, seed: 1, index: 0, config }));
      for (const tool of episode.tools) {
        assert.equal(tool.type, "function");
        assert.ok(tool.function.description.length > 10, `${tool.function.name} needs a description`);
        assert.equal(tool.function.parameters.type, "object");
      }
      if (episode.protocol === "tools") assert.ok(episode.tools.length > 0);
    });
    it("answers nonsense calls with error results, never a throw", async () => {
      const episode = env.start(env.generate({ split: env.defaultSplit, seed: 1, index: 0, config }));
      const junk: Array<[string, unknown]> = [
        ["no_such_tool", {}],
        ["", null],
        [episode.tools[0]?.function.name ?? "x", { wrong: [1, 2] }],
        [episode.tools[0]?.function.name ?? "x", "string"],
      ];
      for (const [name, args] of junk) {
        const result = episode.protocol === "text" && episode.reply ? await episode.reply(String(args)) : episode.call(name, args);
        assert.equal(typeof result.content, "string");
        if (episode.protocol === "tools") assert.equal(result.isError, true);
      }
    });
    if ((options.auditN ?? 0) > 0) {
      it(`passes its audit on ${options.auditN} tasks (oracle high, pilots low)`, async () => {
        const { getAuditSpec } = await import("../../audit/registry.ts");
        const { runAudit } = await import("../../audit/run-audit.ts");
        const result = await runAudit({ env, spec: getAuditSpec(env.id), n: options.auditN as number, seed: 3, config });
        assert.deepEqual(result.failures, []);
        assert.equal(result.verdict, "pass");
      });
    }
  });
}
