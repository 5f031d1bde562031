import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { ToolgymError } from "../core/index.ts";
import type { ViewerData } from "./viewer-data.ts";

/**
 * The trajectory viewer page: one self-contained HTML file (inline CSS, one inline script, the data as
 * JSON in a `<script type="application/json">` tag). A Content-Security-Policy allows exactly that script
 * (by hash) and nothing from the network.
 */
const CLIENT_SCRIPT = readFileSync(new URL("./viewer-client.js", import.meta.url), "utf8");

const STYLE = `*{box-sizing:border-box}
body{margin:0;font:13px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1f2328;background:#f6f8fa;height:100vh;display:flex;flex-direction:column}
header{padding:8px 16px;background:#24292f;color:#fff;display:flex;gap:16px;align-items:baseline;flex-wrap:wrap}
header h1{font-size:16px;margin:0}#summary{color:#c9d1d9}#notes{color:#ffd8a8;width:100%}#notes summary{cursor:pointer}
main{flex:1;display:grid;grid-template-columns:minmax(320px,420px) 1fr;min-height:0}
#sidebar{display:flex;flex-direction:column;border-right:1px solid #d0d7de;background:#fff;min-height:0}
#filters{display:grid;grid-template-columns:1fr 1fr;gap:6px;padding:10px;border-bottom:1px solid #d0d7de}
#filters label{display:flex;flex-direction:column;font-size:11px;color:#57606a;gap:2px}#filters .wide{grid-column:1/3}
input,select{font:inherit;padding:3px 6px;border:1px solid #d0d7de;border-radius:4px;background:#fff;min-width:0}
#count{padding:6px 10px;color:#57606a;font-size:12px;border-bottom:1px solid #eaeef2}
#episode-list{overflow-y:auto;flex:1}
.row{padding:6px 10px;border-bottom:1px solid #eaeef2;cursor:pointer}.row:hover{background:#f3f6fa}.row.selected{background:#ddf4ff;border-left:3px solid #0969da}
.row-top{display:flex;justify-content:space-between;gap:8px}.row-id{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;word-break:break-all}
.row-meta{display:flex;flex-wrap:wrap;gap:0 10px;color:#57606a;font-size:11px}.row-meta .reward{color:#1f2328;font-weight:600}.format-count{color:#bc4c00}
.badge{display:inline-block;font-size:10px;padding:0 6px;border-radius:8px;margin-left:6px;font-weight:600;vertical-align:middle;white-space:nowrap}
.badge.scored{background:#dafbe1;color:#116329}.badge.errored{background:#ffebe9;color:#a40e26}
#detail{overflow-y:auto;padding:12px 20px;min-height:0}#detail h2{font-size:15px;font-family:ui-monospace,Menlo,monospace;margin:4px 0 10px;word-break:break-all}
.section{background:#fff;border:1px solid #d0d7de;border-radius:6px;margin:0 0 10px;padding:6px 12px}.section>summary{font-weight:600;cursor:pointer;padding:2px 0}.format-errors>summary{color:#bc4c00}
table.kv{border-collapse:collapse;margin:6px 0}table.kv th{text-align:left;color:#57606a;font-weight:500;padding:2px 14px 2px 0;vertical-align:top;white-space:nowrap}
table.kv td{padding:2px 0;vertical-align:top;word-break:break-word}.reward-table tr.total td,.reward-table tr.total th{font-weight:700;color:#1f2328}
tr.not-computed td{color:#a40e26;font-style:italic}.formula{font-family:ui-monospace,Menlo,monospace;color:#57606a;margin:4px 0}
.error-line{background:#ffebe9;border-left:3px solid #cf222e;padding:4px 8px;margin:4px 0;white-space:pre-wrap;word-break:break-word}.muted{color:#6e7781}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}pre.inline{margin:0}
.msg{border:1px solid #d0d7de;border-left-width:4px;border-radius:4px;margin:8px 0;padding:4px 10px;background:#fff}
.msg.system{border-left-color:#8c959f;background:#f6f8fa}.msg.user{border-left-color:#0969da;background:#f1f8ff}
.msg.assistant{border-left-color:#1a7f37;background:#f4fbf5}.msg.tool{border-left-color:#9a6700;background:#fffbf0}
.msg.failed{border-left-color:#cf222e;background:#fff5f5}.msg-head{display:flex;gap:8px;align-items:center;font-size:11px}
.role{font-weight:700;text-transform:uppercase;letter-spacing:.03em}.reasoning summary,.long summary{cursor:pointer;color:#57606a;font-size:12px}
.reasoning pre{color:#57606a;border-left:2px solid #d0d7de;padding-left:8px}
.call{border:1px dashed #1a7f37;border-radius:4px;margin:6px 0;padding:2px 8px;background:#fff}.call-head{display:flex;gap:8px;align-items:center}
.tool-name{font-family:ui-monospace,Menlo,monospace;font-weight:700;color:#9a6700}.call-name{font-family:ui-monospace,Menlo,monospace;font-weight:700;color:#1a7f37}`;

const BODY = `<header><h1>toolgym trajectories</h1><span id="summary"></span><details id="notes" hidden></details></header>
<main>
<section id="sidebar" aria-label="episodes">
<div id="filters">
<label class="wide">run<select id="filter-run"><option value="">all runs</option></select></label>
<label>status<select id="filter-status"><option value="">all</option><option value="scored">scored</option><option value="errored">errored</option></select></label>
<label>sort<select id="sort"><option value="">file order</option><option value="reward:desc">reward, high first</option><option value="reward:asc">reward, low first</option><option value="turns:desc">turns, most first</option><option value="turns:asc">turns, fewest first</option><option value="formatErrors:desc">format errors, most first</option></select></label>
<label>min reward<input id="filter-min" type="number" step="any" placeholder="any"></label>
<label>max reward<input id="filter-max" type="number" step="any" placeholder="any"></label>
<label class="wide">search the conversation<input id="filter-text" type="search" placeholder="text in messages, tool calls, results"></label>
</div>
<div id="count"></div>
<div id="episode-list" role="listbox"></div>
</section>
<section id="detail" aria-label="selected episode"></section>
</main>`;

/** The data as JSON that cannot end its script tag: every `<` is written as \u003c (still the same JSON). */
export function embedJson(data: unknown): string {
  return JSON.stringify(data).replace(/</g, "\\u003c");
}

/** The whole viewer page for `data`. */
export function renderViewerHtml(data: ViewerData): string {
  if (/<\/script/i.test(CLIENT_SCRIPT))
    throw new ToolgymError({
      code: "VIEWER_SCRIPT_INVALID",
      message: "src/web/viewer-client.js contains a closing script tag; remove it, the script is inlined",
    });
  const scriptHash = createHash("sha256").update(CLIENT_SCRIPT).digest("base64");
  const policy = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${scriptHash}'; img-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${policy}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolgym trajectories</title>
<style>${STYLE}</style>
</head><body>
${BODY}
<script type="application/json" id="viewer-data">${embedJson(data)}</script>
<script>${CLIENT_SCRIPT}</script>
</body></html>
`;
}
