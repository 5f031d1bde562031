// Rewrites the search_plan golden files (src/envs/search_plan_act/__golden__/<env>.json) from the current
// generator and oracle. Run it only after an intended generator or reward change, and review the diff:
//   npx tsx scripts/update-search-plan-goldens.ts
// The golden test never writes these files itself; a missing or stale golden fails it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { getEnvironment } from "../src/envs/registry.ts";
import { GOLDEN_ADDRESSES } from "../src/envs/search_plan_act/golden-addresses.ts";
import { snapshotTask } from "../src/testing/snapshot.ts";

const directory = join(import.meta.dirname, "../src/envs/search_plan_act/__golden__");
for (const [envId, addresses] of Object.entries(GOLDEN_ADDRESSES)) {
  const env = getEnvironment(envId);
  const items = [];
  for (const address of addresses) items.push(await snapshotTask(env, address));
  const file = join(directory, `${envId}.json`);
  writeFileSync(file, `${JSON.stringify(items, null, 2)}\n`);
  process.stderr.write(`wrote ${file} (${items.length} tasks)\n`);
}
