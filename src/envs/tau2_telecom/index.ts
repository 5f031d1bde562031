import { defineTau2Environment } from "../tau2/define.ts";

/** τ²-bench telecom: agent-side account tools, a simulated phone on the user side; tau2's leaderboard tasks (see about.md). */
export const tau2TelecomEnvironment = defineTau2Environment({
  domain: "telecom",
  title: "τ²-bench telecom",
  defaultSplit: "base",
  description: "tau2-bench telecom technical support (leaderboard base tasks, legacy small set): account tools, the user's simulated phone, tau2's evaluation.",
});
