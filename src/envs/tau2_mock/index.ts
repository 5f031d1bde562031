import { defineTau2Environment } from "../tau2/define.ts";

/** τ²-bench mock: tau2's small task-manager domain with user-side notification tools (see about.md). */
export const tau2MockEnvironment = defineTau2Environment({
  domain: "mock",
  title: "τ²-bench mock",
  defaultSplit: "base",
  description: "tau2-bench mock domain: tasks and users, user-side notifications; tau2's evaluation.",
});
