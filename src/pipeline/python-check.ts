import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { UsageError } from "../core/index.ts";
import { PACKAGE_ROOT, resolvePython } from "./processes.ts";

/** The packages the pipeline's Python steps import (tiny model, SFT, GRPO, `transformers serve`). */
export const PIPELINE_PYTHON_PACKAGES = ["torch", "transformers", "trl", "peft"] as const;

/** Where `resolvePython` found its Python, in words, so the user knows which one was tried. */
function pythonSource(python: string): string {
  if (process.env.TOOLGYM_PYTHON) return `TOOLGYM_PYTHON=${python}`;
  if (python === join(PACKAGE_ROOT, ".venv/bin/python")) return `the project's .venv (${python})`;
  return `${python} on PATH (TOOLGYM_PYTHON is unset and ${join(PACKAGE_ROOT, ".venv")} does not exist)`;
}

/**
 * Checks, before any stage starts, that the pipeline's Python (TOOLGYM_PYTHON, else the project's .venv,
 * else `python3`) runs and has the packages it imports; a stage minutes in is a bad place to find out.
 * Only `find_spec` runs, so the check costs a Python start-up, not a torch import.
 */
export function checkPipelinePython(python: string = resolvePython(), packages: readonly string[] = PIPELINE_PYTHON_PACKAGES): void {
  const fix = `run 'bash scripts/setup-python.sh' in the toolgym checkout (creates .venv) or set TOOLGYM_PYTHON to a Python with ${packages.join(", ")}`;
  const script = `import importlib.util, sys\nprint(",".join(m for m in sys.argv[1:] if importlib.util.find_spec(m) is None))`;
  const probe = spawnSync(python, ["-c", script, ...packages], { encoding: "utf8", timeout: 60_000 });
  if (probe.error || probe.status !== 0) {
    const why = probe.error ? ((probe.error as NodeJS.ErrnoException).code ?? probe.error.message) : `exit ${probe.status}`;
    throw new UsageError({ code: "PYTHON_UNAVAILABLE", message: `the pipeline's Python, ${pythonSource(python)}, does not run (${why}); ${fix}` });
  }
  const missing = probe.stdout.trim();
  if (missing !== "")
    throw new UsageError({
      code: "PYTHON_PACKAGES_MISSING",
      message: `the pipeline's Python, ${pythonSource(python)}, lacks ${missing.split(",").join(", ")}; ${fix}`,
    });
}
