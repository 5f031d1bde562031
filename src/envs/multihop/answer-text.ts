/**
 * The answer in a plain-text reply (`context` and `closed_book` modes):
 * 1. `<think>…</think>` blocks are removed (and everything before a lone `</think>`);
 * 2. if a line starts with `Answer:` (any case, optional Markdown `**`), the text after the colon on the
 *    LAST such line is the answer;
 * 3. otherwise the whole remaining reply, trimmed, is the answer.
 */
const ANSWER_LINE = /^\s*\**\s*answer\s*\**\s*:\s*(.*?)\s*$/i;

export function extractTextAnswer(reply: string): string {
  let text = reply.replace(/<think>[\s\S]*?<\/think>/g, "");
  const lonelyClose = text.lastIndexOf("</think>");
  if (lonelyClose !== -1) text = text.slice(lonelyClose + "</think>".length);
  const lines = text.split(/\r?\n/);
  for (let position = lines.length - 1; position >= 0; position--) {
    const match = ANSWER_LINE.exec(lines[position] as string);
    if (match) return (match[1] as string).replace(/^\*+\s*|\s*\*+$/g, "").trim();
  }
  return text.trim();
}
