import { UsageError } from "../../core/index.ts";
import { lazy, readAsset, readJsonAsset } from "./data.ts";
import type { Tau2Domain } from "./environment.ts";
import { mockDomain } from "./mock.ts";
import { retailDomain } from "./retail.ts";
import { telecomDomain } from "./telecom.ts";
import type { Tau2Task } from "./types.ts";

/** A tau2 domain with its task files, splits and agent policy, as the environments use it. */
export interface DomainBundle {
  domain: Tau2Domain;
  tasks(): Tau2Task[];
  /** Split name → task ids, from the domain's split file (`base` = every task). */
  splits(): Record<string, string[]>;
  policy(): string;
}

/**
 * A split's tasks in the tasks file's order, as tau2's loaders filter them (`[t for t in tasks if t.id in
 * split]`), so task index k is tau2's k-th task of the split.
 */
function splitsInFileOrder(tasks: readonly Tau2Task[], splits: Record<string, string[]>, names: readonly string[]): Record<string, string[]> {
  return Object.fromEntries(
    names.map((name) => {
      const ids = new Set(splits[name] ?? []);
      return [name, tasks.filter((task) => ids.has(task.id)).map((task) => task.id)];
    }),
  );
}

function bundle(domain: Tau2Domain, files: { tasks: string; splits?: string; policy: string[] }): DomainBundle {
  const tasks = lazy(() => readJsonAsset<Tau2Task[]>(files.tasks));
  return {
    domain,
    tasks,
    splits: lazy(() => {
      if (!files.splits) return { base: tasks().map((task) => task.id) };
      const splits = readJsonAsset<Record<string, string[]>>(files.splits);
      return splitsInFileOrder(tasks(), splits, Object.keys(splits));
    }),
    policy: lazy(() => files.policy.map(readAsset).join("\n")),
  };
}

/**
 * Telecom's two task sets: `tasks_base.json`, the 114 tasks of tau2's leaderboard `base` split (with its
 * `train`/`test` halves from `split_tasks.json`), and the legacy `tasks_small.json` (`small`, 20 other
 * tasks). tau2's 2285-task `full` set is not shipped (over 4 MiB), so its split is left out.
 */
const telecomBundle = (): DomainBundle => {
  const tasks = lazy(() => [...readJsonAsset<Tau2Task[]>("domains/telecom/tasks_base.json"), ...readJsonAsset<Tau2Task[]>("domains/telecom/tasks_small.json")]);
  return {
    domain: telecomDomain,
    tasks,
    splits: lazy(() => ({
      ...splitsInFileOrder(tasks(), readJsonAsset<Record<string, string[]>>("domains/telecom/split_tasks.json"), ["base", "train", "test"]),
      small: readJsonAsset<Tau2Task[]>("domains/telecom/tasks_small.json").map((task) => task.id),
    })),
    policy: lazy(
      () =>
        `<main_policy>\n${readAsset("domains/telecom/main_policy.md")}\n</main_policy>\n<tech_support_policy>\n${readAsset("domains/telecom/tech_support_manual.md")}\n</tech_support_policy>`,
    ),
  };
};

const BUNDLES: Record<string, () => DomainBundle> = {
  retail: lazy(() =>
    bundle(retailDomain, { tasks: "domains/retail/tasks.json", splits: "domains/retail/split_tasks.json", policy: ["domains/retail/policy.md"] }),
  ),
  mock: lazy(() => bundle(mockDomain, { tasks: "domains/mock/tasks.json", splits: "domains/mock/split_tasks.json", policy: ["domains/mock/policy.md"] })),
  telecom: lazy(telecomBundle),
};

export function registerDomain(id: string, make: () => DomainBundle): void {
  BUNDLES[id] = lazy(make);
}

export function domainIds(): string[] {
  return Object.keys(BUNDLES);
}

export function getDomain(id: string): DomainBundle {
  const make = BUNDLES[id];
  if (!make) throw new UsageError({ code: "TAU2_DOMAIN_UNKNOWN", message: `unknown tau2 domain '${id}'; known: ${domainIds().join(", ")}` });
  return make();
}

export function findTask(bundleValue: DomainBundle, taskId: string): Tau2Task {
  const task = bundleValue.tasks().find((candidate) => candidate.id === taskId);
  if (!task) {
    throw new UsageError({
      code: "TAU2_TASK_UNKNOWN",
      message: `no task '${taskId}' in tau2 domain '${bundleValue.domain.id}'; see its tasks file under assets/tau2/domains`,
    });
  }
  return task;
}
