/**
 * Builds the JSON text of an episode's chat-completions requests without re-serialising the whole
 * conversation every turn: each message's JSON is kept, keyed by the message object, and only messages
 * not seen before are serialised. The rollout appends new message objects and never mutates sent ones
 * (a `view` hook that rebuilds messages simply gets them serialised afresh).
 *
 * The text equals `JSON.stringify({model, messages, tools?, ...fields})` byte for byte, with `fields`
 * in the order given (servers and the fault server's deterministic fault draws see the same bytes).
 */
export class RequestBodyBuilder {
  private readonly head: string;
  private sentMessages: readonly unknown[] = [];
  private messageJson: string[] = [];
  private sentTools: unknown;
  private toolsJson = "";

  constructor(model: string) {
    this.head = `{"model":${JSON.stringify(model)},"messages":[`;
  }

  build(messages: readonly unknown[], tools: readonly unknown[] | undefined, fields: ReadonlyArray<readonly [string, unknown]>): string {
    const json = this.messageJson;
    const sent = this.sentMessages;
    json.length = Math.min(json.length, messages.length);
    for (let position = 0; position < messages.length; position++) {
      if (position < sent.length && sent[position] === messages[position] && json[position] !== undefined) continue;
      json[position] = JSON.stringify(messages[position]) ?? "null";
    }
    this.sentMessages = messages.slice();
    let text = `${this.head}${json.join(",")}]`;
    if (tools !== undefined) {
      if (tools !== this.sentTools) {
        this.sentTools = tools;
        this.toolsJson = JSON.stringify(tools);
      }
      text += `,"tools":${this.toolsJson}`;
    }
    for (const [name, value] of fields) {
      const valueJson = JSON.stringify(value);
      if (valueJson !== undefined) text += `,${JSON.stringify(name)}:${valueJson}`;
    }
    return `${text}}`;
  }
}
