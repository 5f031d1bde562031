import { defineTau2Environment } from "../tau2/define.ts";

/** τ²-bench retail: orders, exchanges and returns under tau2's retail policy (see about.md). */
export const tau2RetailEnvironment = defineTau2Environment({
  domain: "retail",
  title: "τ²-bench retail",
  defaultSplit: "base",
  description: "tau2-bench retail customer service: tau2's tools, DB, policy, user simulator and evaluation.",
});
