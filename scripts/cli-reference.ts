// Writes docs/cli.md from the commander program (src/cli/reference.ts). Run it after adding or changing a
// command or option: `npx tsx scripts/cli-reference.ts`; test/cli-reference.test.ts fails until you do.
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { memoryStream } from "../src/cli/io.ts";
import { createProgram } from "../src/cli/main.ts";
import { cliReference } from "../src/cli/reference.ts";

const program = createProgram({ io: { stdout: memoryStream(), stderr: memoryStream() }, setExitCode: () => undefined });
const out = join(import.meta.dirname, "..", "docs", "cli.md");
// Written beside and renamed, so an interrupted run never leaves a half-written reference.
const temporary = `${out}.${process.pid}.partial`;
writeFileSync(temporary, cliReference(program));
renameSync(temporary, out);
console.log(`wrote ${out}`);
