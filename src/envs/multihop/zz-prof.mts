import { loadDataset } from "./dataset.ts";
import { CompactBm25 } from "./compact-bm25.ts";
const d = loadDataset({ dataset: "2wiki", file: process.argv[2] as string, skipBad: false });
const docs = d.examples.flatMap((e) => e.paragraphs.map((p) => `${p.title} ${p.text}`));
let c = process.cpuUsage(); for (let i = 0; i < d.examples.length; i++) new CompactBm25(docs.slice(i * 10, i * 10 + 10)); let u = process.cpuUsage(c); console.log("compact per-example", (u.user + u.system) / 1e6);
c = process.cpuUsage(); new CompactBm25(docs); u = process.cpuUsage(c); console.log("compact pool", (u.user + u.system) / 1e6);
