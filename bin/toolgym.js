#!/usr/bin/env node
// Runs the TypeScript CLI through tsx, so `npm ci && npx toolgym …` needs no build step.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");

let controller;
/** Ctrl-C handling for commands that stop cleanly: the first SIGINT/SIGTERM aborts, a second SIGINT exits at once. */
function interrupts() {
  if (controller) return controller.signal;
  controller = new AbortController();
  const stop = (signal) => {
    if (controller.signal.aborted && signal === "SIGINT") process.exit(130);
    controller.abort(new Error(`received ${signal}`));
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  return controller.signal;
}

process.exitCode = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, interrupts });
// Interrupted: the command has cleaned up and said so; work it left running (a file being built) stops here.
if (process.exitCode === 130) process.exit(130);
