// docs/cli.md is generated from the commander program (scripts/cli-reference.ts); these tests keep the two
// equal, so an option added or changed in src/cli/commands/ without regenerating the reference fails here.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { memoryStream } from "../src/cli/io.ts";
import { createProgram } from "../src/cli/main.ts";
import { cliReference, commandsOf, pipes } from "../src/cli/reference.ts";

const root = resolve(import.meta.dirname, "..");
const program = () => createProgram({ io: { stdout: memoryStream(), stderr: memoryStream() }, setExitCode: () => undefined });
const committed = () => readFileSync(join(root, "docs", "cli.md"), "utf8");

describe("the CLI reference (docs/cli.md)", () => {
  it("is what the commander definitions generate now", () => {
    const generated = cliReference(program()).split("\n");
    const written = committed().split("\n");
    const line = generated.findIndex((text, index) => text !== written[index]);
    // One differing line, not two 30 kB strings: the message says where and how to fix it.
    assert.ok(
      line === -1 && generated.length === written.length,
      `docs/cli.md is stale at line ${line + 1}: the commander definitions give ${JSON.stringify(generated[line])}, the file has ${JSON.stringify(written[line])}; run \`npx tsx scripts/cli-reference.ts\` and commit docs/cli.md`,
    );
  });

  it("documents every command, argument and option, each with a description", () => {
    const text = committed();
    for (const { path, command } of commandsOf(program())) {
      assert.ok(command.description().length > 10, `${path} has a description`);
      assert.ok(text.includes(`\n## ${path}\n`), `docs/cli.md has a section for ${path}`);
      for (const argument of command.registeredArguments) assert.ok(argument.description.length > 3, `${path} <${argument.name()}> has a description`);
      for (const option of command.options) {
        assert.ok(option.description.length > 3, `${path} ${option.flags} has a description`);
        assert.ok(text.includes(`| \`${pipes(option.flags)}\` |`), `docs/cli.md lists ${path} ${option.flags}`);
      }
    }
  });

  it("lists the options a newcomer looked for and did not find in the old README", () => {
    const text = committed();
    for (const needle of [
      "## toolgym sft conversations",
      "`--user-model <url#name>`",
      "`--judge-model <url#name>`",
      "`--quiet`",
      "`--task <id>`",
      "`--replies <file>`",
      "`--cases <file>`",
      "tau2-sft",
    ])
      assert.ok(text.includes(needle), `docs/cli.md mentions ${needle}`);
  });

  it("changes when an option is added, so the staleness check above catches it", () => {
    const changed = program();
    const before = cliReference(changed);
    const evalCommand = changed.commands.find((command) => command.name() === "eval");
    assert.ok(evalCommand);
    evalCommand.option("--brand-new <x>", "an option added without regenerating the reference");
    const after = cliReference(changed);
    assert.notEqual(after, before);
    assert.match(after, /\| `--brand-new <x>` \| an option added without regenerating the reference \|/);
  });

  it("does not depend on the machine it is generated on (the core count in eval --workers' help)", () => {
    assert.match(committed(), /\| `--workers <n>` \| worker threads playing episodes \(default: cores - 1, at most \d+\)/);
  });
});
