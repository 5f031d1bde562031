import type { Command } from "commander";
import type { AnyEnvironment } from "../../core/index.ts";
import { getEnvironment, listEnvironments } from "../../envs/registry.ts";
import { builtinSuite, builtinSuiteNames } from "../../eval/suites/builtin.ts";
import { writeJson, type CommandContext } from "../io.ts";
import { parseChoice, parseText } from "../options.ts";

const WHAT = ["envs", "agents", "pilots", "suites"] as const;
type What = (typeof WHAT)[number];

interface Entry {
  id: string;
  env?: string;
  description: string;
  details?: string;
}

/** Everything `toolgym list` shows comes from the environment definitions and the built-in suites. */
function entries(what: What, environments: AnyEnvironment[]): Entry[] {
  if (what === "envs")
    return environments.map((env) => ({
      id: env.id,
      description: `${env.title && env.title !== env.id ? `${env.title}: ` : ""}${env.description}`,
      details: `protocol ${env.protocol}; splits ${env.splits.join(", ")} (default ${env.defaultSplit}); version ${env.version}${env.audit ? "; audited" : ""}${
        env.exports ? `; exports ${Object.keys(env.exports).join(", ")}` : ""
      }`,
    }));
  if (what === "agents" || what === "pilots") {
    const kind = what === "agents" ? "genuine" : "pilot";
    return environments.flatMap((env) =>
      (env.policies ?? []).filter((policy) => policy.kind === kind).map((policy) => ({ id: policy.id, env: env.id, description: policy.description })),
    );
  }
  return builtinSuiteNames().map((name) => {
    const suite = builtinSuite(name);
    return {
      id: name,
      description: suite?.description ?? "",
      details: suite ? `${suite.rows.length} row(s): ${suite.rows.map((row) => row.benchmark).join(", ")}` : "",
    };
  });
}

function formatSection(what: What, list: Entry[]): string {
  const width = Math.max(4, ...list.map((entry) => entry.id.length));
  const lines = [`${what}:`];
  let env: string | undefined;
  for (const entry of list) {
    if (entry.env !== undefined && entry.env !== env) {
      env = entry.env;
      lines.push(`  ${env}`);
    }
    const indent = entry.env !== undefined ? "    " : "  ";
    lines.push(`${indent}${entry.id.padEnd(width)}  ${entry.description}`);
    if (entry.details) lines.push(`${indent}${" ".repeat(width)}  ${entry.details}`);
  }
  if (list.length === 0) lines.push("  (none)");
  return lines.join("\n");
}

export function registerList(program: Command, { io }: CommandContext): void {
  program
    .command("list")
    .description("List environments, scripted agents, reward-hacking pilots and built-in suites.")
    .argument("[what]", WHAT.join(" | ") + " (default: all)", parseChoice("list", WHAT))
    .option("--env <id>", "only this environment's agents or pilots", parseText("--env"))
    .option("--json", "print JSON")
    .action((what: What | undefined, options: { env?: string; json?: boolean }) => {
      const environments = options.env ? [getEnvironment(options.env)] : listEnvironments();
      const sections = what ? [what] : [...WHAT];
      const result = Object.fromEntries(sections.map((section) => [section, entries(section, environments)]));
      if (options.json) return writeJson(io, result);
      io.stdout.write(`${sections.map((section) => formatSection(section, result[section] as Entry[])).join("\n\n")}\n`);
    });
}
