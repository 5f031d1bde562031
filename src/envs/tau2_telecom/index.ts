import { defineTau2Environment } from "../tau2/define.ts";

/** τ²-bench telecom (small task set): agent-side account tools, a simulated phone on the user side (see about.md). */
export const tau2TelecomEnvironment = defineTau2Environment({
  domain: "telecom",
  title: "τ²-bench telecom",
  defaultSplit: "small",
  description: "tau2-bench telecom technical support (small task set): account tools, the user's simulated phone, tau2's evaluation.",
});
