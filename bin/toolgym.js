#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npm ci && npx toolgym …` needs no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
const code = await main(process.argv.slice(2));
process.exitCode = code;
