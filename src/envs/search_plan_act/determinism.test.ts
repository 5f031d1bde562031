import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { getEnvironment } from "../registry.ts";
import { snapshotTask } from "../../testing/snapshot.ts";
import { GOLDEN_ADDRESSES } from "./golden-addresses.ts";

// Golden files pin a few tasks and their oracle trajectories. The test only reads them; after an intended
// generator or reward change, regenerate them with scripts/update-search-plan-goldens.ts and review the diff.
const REGENERATE = "npx tsx scripts/update-search-plan-goldens.ts";
const here = dirname(fileURLToPath(import.meta.url));

async function snapshots(envId: string): Promise<string> {
  const env = getEnvironment(envId);
  const items = [];
  for (const address of GOLDEN_ADDRESSES[envId] ?? []) items.push(await snapshotTask(env, address));
  return `${JSON.stringify(items, null, 2)}\n`;
}

describe("search_plan determinism", () => {
  for (const envId of ["search_plan_act", "search_plan_ood"]) {
    it(`${envId}: matches the golden file`, async () => {
      const file = join(here, "__golden__", `${envId}.json`);
      assert.ok(existsSync(file), `golden file ${file} is missing; create it with ${REGENERATE}`);
      const actual = await snapshots(envId);
      // Compared as compact JSON (same keys, order and values), so reformatting the file (prettier) is not a change.
      const compact = (text: string): string => JSON.stringify(JSON.parse(text));
      assert.equal(
        compact(actual),
        compact(readFileSync(file, "utf8")),
        `generator output changed; if intended, regenerate with ${REGENERATE} and review the diff`,
      );
    });

    it(`${envId}: gives byte-identical tasks and trajectories in another process`, async () => {
      const snapshot = join(here, "..", "..", "testing", "snapshot.ts");
      const addresses = join(here, "golden-addresses.ts");
      const registry = join(here, "..", "registry.ts");
      const script = `const { snapshotTask } = await import(${JSON.stringify(snapshot)}); const { GOLDEN_ADDRESSES } = await import(${JSON.stringify(addresses)}); const { getEnvironment } = await import(${JSON.stringify(registry)});
        const env = getEnvironment(${JSON.stringify(envId)}); const items = []; for (const address of GOLDEN_ADDRESSES[${JSON.stringify(envId)}]) items.push(await snapshotTask(env, address));
        process.stdout.write(JSON.stringify(items, null, 2) + "\\n");`;
      const child = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" });
      assert.equal(child, await snapshots(envId));
    });
  }
});
