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

function bundle(domain: Tau2Domain, files: { tasks: string; splits?: string; policy: string[] }): DomainBundle {
  const tasks = lazy(() => readJsonAsset<Tau2Task[]>(files.tasks));
  return {
    domain,
    tasks,
    splits: lazy(() => (files.splits ? readJsonAsset<Record<string, string[]>>(files.splits) : { base: tasks().map((task) => task.id) })),
    policy: lazy(() => files.policy.map(readAsset).join("\n")),
  };
}

const BUNDLES: Record<string, () => DomainBundle> = {
  retail: lazy(() =>
    bundle(retailDomain, { tasks: "domains/retail/tasks.json", splits: "domains/retail/split_tasks.json", policy: ["domains/retail/policy.md"] }),
  ),
  mock: lazy(() => bundle(mockDomain, { tasks: "domains/mock/tasks.json", splits: "domains/mock/split_tasks.json", policy: ["domains/mock/policy.md"] })),
  // tau2's telecom/tasks.json is over 4 MiB and absent here; tasks_small.json is its `small` split.
  telecom: lazy(() => ({
    ...bundle(telecomDomain, { tasks: "domains/telecom/tasks_small.json", policy: [] }),
    splits: lazy(() => ({ small: readJsonAsset<Tau2Task[]>("domains/telecom/tasks_small.json").map((task) => task.id) })),
    policy: lazy(
      () =>
        `<main_policy>\n${readAsset("domains/telecom/main_policy.md")}\n</main_policy>\n<tech_support_policy>\n${readAsset("domains/telecom/tech_support_manual.md")}\n</tech_support_policy>`,
    ),
  })),
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
