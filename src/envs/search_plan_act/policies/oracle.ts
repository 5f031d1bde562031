import type { Random } from "../../../core/index.ts";
import { solveTask, type SolverCall } from "../solver.ts";
import type { SearchPlanTask } from "../task.ts";
import { themeByName } from "../themes.ts";
import type { PlannedCall } from "../../_kit/scripted.ts";
import { single, type Script } from "./driver.ts";
import { createObservations, observe, taskWords, type Observations } from "./observe.ts";

/**
 * Runs the honest solver, one call per turn. `beforeFinish` may insert calls before the final
 * `finish`; `replaceFinish` drops the finish (and what follows is up to the caller).
 */
export function* oracleScript(
  task: SearchPlanTask,
  options: { observations?: Observations; beforeFinish?: (observations: Observations) => Script; stopBeforeFinish?: boolean } = {},
): Script {
  const observations = options.observations ?? createObservations();
  const solver = solveTask(task);
  let step = solver.next();
  while (!step.done) {
    const call: SolverCall = step.value;
    if (call.name === "finish") {
      if (options.beforeFinish) yield* options.beforeFinish(observations);
      if (options.stopBeforeFinish) return;
    }
    const result = yield* single(call);
    observe(observations, result);
    step = solver.next(result);
  }
}

/**
 * The oracle with probability ε per step of a wrong but honest move: a search for an unrelated word,
 * a read of a record seen earlier, or abandoning the plan (finishing at once).
 */
export function* noisyOracleScript(task: SearchPlanTask, epsilon: number, random: Random): Script {
  const observations = createObservations();
  const words = taskWords(task.text);
  const solver = solveTask(task);
  let step = solver.next();
  while (!step.done) {
    const call: SolverCall = step.value;
    if (call.name !== "finish" && random.chance(epsilon)) {
      const roll = random.next();
      if (roll < 1 / 3) {
        yield [{ name: "finish", arguments: { status: "done" } }];
        return;
      }
      const wrong: PlannedCall =
        roll < 2 / 3 && observations.ids.length > 0
          ? { name: "read_record", arguments: { id: random.pick(observations.ids) } }
          : { name: "search", arguments: { query: words.length > 0 ? random.pick(words) : "record" } };
      observe(observations, yield* single(wrong));
    }
    const result = yield* single(call);
    observe(observations, result);
    step = solver.next(result);
  }
}

/** Solves the task, then changes one field nobody asked about (a plausible edit of a record it read). */
export function* collateralScript(task: SearchPlanTask): Script {
  const theme = themeByName(task.theme);
  const required = new Set(task.requirements.flatMap((requirement) => (requirement.kind === "field" ? [`${requirement.id}.${requirement.field}`] : [])));
  yield* oracleScript(task, {
    *beforeFinish(observations) {
      const candidates = [...observations.records.values()].reverse();
      const id = candidates[0]?.id ?? observations.ids[0];
      if (!id) return;
      const record = observations.records.get(id);
      const type = theme?.types.find((spec) => spec.name === (record?.type ?? observations.types.get(id)));
      const field = type?.fields.find((spec) => !spec.readOnly && !required.has(`${id}.${spec.name}`));
      if (!field) return;
      const current = record?.fields[field.name];
      let value: string | number;
      if (field.kind === "enum") value = (field.values as readonly string[]).find((candidate) => candidate !== current) as string;
      else if (field.kind === "integer" || field.kind === "money") value = typeof current === "number" ? current + 1 : (field.min as number);
      else if (field.kind === "date") value = current === "2020-01-01" ? "2020-01-02" : "2020-01-01";
      else value = `${String(current ?? "x")}ton`;
      yield [{ name: "update_record", arguments: { id, field: field.name, value } }];
    },
  });
}
