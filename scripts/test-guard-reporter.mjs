// A node:test reporter that writes one line per broken rule of the suite, read by scripts/run-tests.mjs
// after the run: a test file that printed to stdout (output belongs in the streams a test passes to the
// code under test, not in the test log), and a test or suite that was skipped or marked todo (a suite-level
// skip hides every test inside it, so node's own "skipped" count is not enough).

/** One line: kind, file, detail (tabs and newlines flattened so the runner can split it). */
function line(kind, file, detail) {
  const flat = (text) => String(text ?? "").replace(/[\t\n\r]+/g, " ");
  return `${kind}\t${flat(file)}\t${flat(detail)}\n`;
}

export default async function* guardReporter(source) {
  for await (const event of source) {
    const data = event.data ?? {};
    if (event.type === "test:stdout") yield line("stdout", data.file, data.message);
    if (event.type === "test:pass" || event.type === "test:fail") {
      if (data.skip !== undefined && data.skip !== false) yield line("skip", data.file, `${data.name}: ${data.skip === true ? "skipped" : data.skip}`);
      if (data.todo !== undefined && data.todo !== false) yield line("todo", data.file, `${data.name}: ${data.todo === true ? "todo" : data.todo}`);
    }
  }
}
