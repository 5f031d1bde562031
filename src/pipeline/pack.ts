import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { STAGES } from "./config.ts";

/**
 * The evidence a reviewer recomputes the card from, under `<out>/evidence/`: every evaluation run (metadata.json,
 * and results.jsonl gzipped: every episode), each stage's log (gzipped), done marker and commands, the GRPO arms'
 * step logs and TRL's log histories, and the config. Paths inside --out are written relative to it, so the pack
 * reads the same wherever it is unpacked; `unpackEvidence` lays it out as a pipeline directory again, over which
 * the card stage (`writeEvidence`) renders the same card.
 */
export const EVIDENCE_DIR = "evidence";
const GZIP = ".gz";
/** Files copied as they are (small); the rest of what is packed is gzipped. */
const SUITE_FILE = "suite.json";
const PLAIN = new Set(["metadata.json", "done.json", "pipeline.json", SUITE_FILE]);

function relativeText(text: string, out: string): string {
  return text.split(`${out}/`).join("");
}

function put(path: string, data: Buffer | string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.partial`, data);
  renameSync(`${path}.partial`, path);
}

/** Every `suite.json` under `directory`: the suite files and `toolgym eval --suite` manifests (the report's row order and suite name). */
function suiteFiles(directory: string): string[] {
  if (!existsSync(directory) || !statSync(directory).isDirectory()) return [];
  return readdirSync(directory)
    .sort()
    .flatMap((name) => {
      const path = join(directory, name);
      if (name === SUITE_FILE) return [path];
      return statSync(path).isDirectory() && !existsSync(join(path, "metadata.json")) ? suiteFiles(path) : [];
    });
}

/** Every evaluation run directory (one with metadata.json) under `directory`. */
function runDirectories(directory: string): string[] {
  if (!existsSync(directory) || !statSync(directory).isDirectory()) return [];
  if (existsSync(join(directory, "metadata.json"))) return [directory];
  return readdirSync(directory)
    .sort()
    .filter((name) => !name.startsWith("."))
    .flatMap((name) => runDirectories(join(directory, name)));
}

/** The files packed, relative to --out. */
function packedFiles(out: string): string[] {
  const files = ["pipeline.json"];
  // The card stage is still running while it packs: its log is not finished.
  for (const stage of STAGES.filter((name) => name !== "card")) for (const name of ["done.json", "log.txt", "commands.txt"]) files.push(join(stage, name));
  const grpo = join(out, "grpo");
  if (existsSync(grpo))
    for (const arm of readdirSync(grpo).sort()) files.push(join("grpo", arm, "steps.jsonl"), join("grpo", arm, "model", "log_history.json"));
  files.push(join("sft", "model", "log_history.json"), join("baseline", "model", "log_history.json"));
  for (const stage of ["eval-pre", "eval-post"]) files.push(...suiteFiles(join(out, stage)).map((path) => relative(out, path)));
  for (const stage of ["eval-pre", "eval-post"])
    for (const run of runDirectories(join(out, stage))) files.push(join(relative(out, run), "metadata.json"), join(relative(out, run), "results.jsonl"));
  return files.filter((file) => existsSync(join(out, file)) && statSync(join(out, file)).isFile());
}

/** Writes the pack (replacing an older one); gzip output carries no timestamp, so the same run packs to the same bytes. */
export function packEvidence(out: string, destination = join(out, EVIDENCE_DIR)): void {
  rmSync(destination, { recursive: true, force: true });
  for (const file of packedFiles(out)) {
    const text = relativeText(readFileSync(join(out, file), "utf8"), out);
    const name = file.split("/").at(-1) as string;
    if (PLAIN.has(name)) put(join(destination, file), text);
    else put(join(destination, `${file}${GZIP}`), gzipSync(text, { level: 9 }));
  }
}

/** Lays a pack out as a pipeline directory under `out` (gunzipping what was gzipped); returns the files written. */
export function unpackEvidence(pack: string, out: string): string[] {
  const written: string[] = [];
  const visit = (directory: string) => {
    for (const name of readdirSync(directory).sort()) {
      const path = join(directory, name);
      if (statSync(path).isDirectory()) {
        visit(path);
        continue;
      }
      const target = join(out, relative(pack, path));
      if (name.endsWith(GZIP)) put(target.slice(0, -GZIP.length), gunzipSync(readFileSync(path)));
      else {
        mkdirSync(dirname(target), { recursive: true });
        copyFileSync(path, target);
      }
      written.push(relative(out, name.endsWith(GZIP) ? target.slice(0, -GZIP.length) : target));
    }
  };
  visit(pack);
  return written;
}
