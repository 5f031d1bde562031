/**
 * Builds what several test files share before they run, so that no two build it at once and the build
 * overlaps the type check: `node --import tsx test/support/prepare.ts` (scripts/run-tests.mjs starts it).
 */
import { requirePython } from "./qwen3.ts";
import { SHARED_TINY_QWEN3, tinyQwen3Dir } from "./tiny-qwen3.ts";

const python = requirePython();
for (const options of SHARED_TINY_QWEN3) tinyQwen3Dir(python, options);
