/**
 * Chat templates rendered exactly as Python transformers' `apply_chat_template` renders them.
 *
 * The engine is @huggingface/jinja with the template parsed as transformers does (trim_blocks,
 * lstrip_blocks, one trailing newline dropped). Two engine gaps are closed inside the interpreter, so any
 * template a user supplies benefits, not only Qwen3:
 * - `str.strip/lstrip/rstrip(chars)` honour `chars` and Python's whitespace set (0.5.11 ignores `chars`);
 * - `tojson` is Python `json.dumps` (float `repr`, `ensure_ascii`, `indent`, `separators`, `sort_keys`).
 * Data values may carry `PythonFloat`/`Map`/`bigint` from `parsePythonJson`, so `100.0` stays a float and
 * integer-like keys keep their order, as they would in Python.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Environment, Interpreter, parse, tokenize } from "@huggingface/jinja";
import { DataError } from "../core/errors.ts";
import { PythonFloat, type PythonDumpsOptions, pythonJsonDumps, pythonStrip } from "../python-semantics/index.ts";
import { isQwen3Template, renderQwen3 } from "./qwen3-chat-template.ts";

/** The structural view of @huggingface/jinja runtime values this module needs. */
interface RuntimeValue {
  type: string;
  value: unknown;
}
type RuntimeClass = new (value: unknown) => RuntimeValue;
interface AstNode {
  type: string;
  [key: string]: unknown;
}
interface InterpreterInternals {
  evaluate(node: AstNode, environment: Environment): RuntimeValue;
  evaluateArguments(args: unknown, environment: Environment): [RuntimeValue[], Map<string, RuntimeValue>];
}

function probeClasses(): Record<string, RuntimeClass> {
  const environment = new Environment();
  const samples: Record<string, unknown> = { Integer: 1, Float: 1.5, String: "", Boolean: true, Object: {}, Array: [], Null: null, Undefined: undefined };
  const classes: Record<string, RuntimeClass> = {};
  for (const [name, sample] of Object.entries(samples)) {
    environment.set(`probe${name}`, sample);
    classes[name] = (environment.lookupVariable(`probe${name}`) as unknown as RuntimeValue).constructor as RuntimeClass;
  }
  return classes;
}
const runtime = probeClasses();

let functionCounter = 0;

/** Converts data to runtime values, keeping Python float-ness and Map key order. */
function toRuntimeValue(value: unknown, environment: Environment): RuntimeValue {
  if (value === undefined) return new runtime.Undefined(undefined);
  if (value === null) return new runtime.Null(null);
  if (typeof value === "string") return new runtime.String(value);
  if (typeof value === "boolean") return new runtime.Boolean(value);
  if (typeof value === "number") return Number.isInteger(value) ? new runtime.Integer(value) : new runtime.Float(value);
  if (typeof value === "bigint") return new runtime.Integer(Number(value));
  if (value instanceof PythonFloat) return new runtime.Float(value.value);
  if (Array.isArray(value)) return new runtime.Array(value.map((item) => toRuntimeValue(item, environment)));
  if (typeof value === "function") {
    const name = `__toolgym_function_${functionCounter++}`;
    environment.set(name, value);
    return environment.lookupVariable(name) as unknown as RuntimeValue;
  }
  const entries = value instanceof Map ? [...(value as Map<string, unknown>).entries()] : Object.entries(value as object);
  return new runtime.Object(new Map(entries.map(([key, item]) => [key, toRuntimeValue(item, environment)])));
}

/** Runtime value → plain data for `pythonJsonDumps` (FloatValue becomes PythonFloat so `1.0` prints as `1.0`). */
function toPlainData(value: RuntimeValue): unknown {
  switch (value.type) {
    case "FloatValue":
      return new PythonFloat(value.value as number);
    case "ArrayValue":
    case "TupleValue":
      return (value.value as RuntimeValue[]).map(toPlainData);
    case "ObjectValue":
    case "KeywordArgumentsValue":
    case "NamespaceValue":
      return new Map([...(value.value as Map<string, RuntimeValue>).entries()].map(([key, item]) => [key, toPlainData(item)]));
    case "UndefinedValue":
      return null;
    default:
      return value.value;
  }
}

const stripSides: Record<string, "both" | "left" | "right"> = { strip: "both", lstrip: "left", rstrip: "right" };

function dumpsOptions(kwargs: Map<string, RuntimeValue>): PythonDumpsOptions {
  const options: PythonDumpsOptions = {};
  const indent = kwargs.get("indent");
  if (indent && indent.type === "IntegerValue") options.indent = indent.value as number;
  const ensureAscii = kwargs.get("ensure_ascii");
  if (ensureAscii && ensureAscii.type === "BooleanValue") options.ensureAscii = ensureAscii.value as boolean;
  const sortKeys = kwargs.get("sort_keys");
  if (sortKeys && sortKeys.type === "BooleanValue") options.sortKeys = sortKeys.value as boolean;
  const separators = kwargs.get("separators");
  if (separators && (separators.type === "ArrayValue" || separators.type === "TupleValue")) {
    const [item, key] = (separators.value as RuntimeValue[]).map((part) => String(part.value));
    options.separators = [item, key];
  }
  return options;
}

/** Interpreter with Python semantics for `strip`-family calls and `tojson`. */
const PythonInterpreter: typeof Interpreter = class extends Interpreter {};
{
  const prototype = PythonInterpreter.prototype as unknown as Record<string, (...args: never[]) => RuntimeValue>;
  const base = Interpreter.prototype as unknown as Record<string, (this: unknown, ...args: unknown[]) => RuntimeValue>;
  const baseCall = base.evaluateCallExpression;
  const baseFilter = base.applyFilter;
  prototype.evaluateCallExpression = function (this: InterpreterInternals, expression: AstNode, environment: Environment): RuntimeValue {
    const callee = expression.callee as AstNode;
    if (callee.type === "MemberExpression" && !callee.computed) {
      const property = callee.property as AstNode;
      const side = property.type === "Identifier" ? stripSides[property.value as string] : undefined;
      if (side) {
        const target = this.evaluate(callee.object as AstNode, environment);
        if (target.type === "StringValue") {
          const [args] = this.evaluateArguments(expression.args, environment);
          const chars = args[0]?.type === "StringValue" ? (args[0].value as string) : null;
          return new runtime.String(pythonStrip(target.value as string, side, chars));
        }
      }
    }
    return baseCall.call(this, expression, environment);
  } as never;
  prototype.applyFilter = function (this: InterpreterInternals, operand: RuntimeValue, filter: AstNode, environment: Environment): RuntimeValue {
    if (filter.type === "Identifier" && filter.value === "tojson") return new runtime.String(pythonJsonDumps(toPlainData(operand)));
    if (filter.type === "CallExpression" && (filter.callee as AstNode).type === "Identifier" && (filter.callee as AstNode).value === "tojson") {
      const [, kwargs] = this.evaluateArguments(filter.args, environment);
      return new runtime.String(pythonJsonDumps(toPlainData(operand), dumpsOptions(kwargs)));
    }
    return baseFilter.call(this, operand, filter, environment);
  } as never;
}

export interface ChatRenderOptions {
  /** OpenAI-style tool schemas; an empty list renders like none, as in transformers. */
  tools?: unknown[];
  addGenerationPrompt?: boolean;
  /** Extra template variables (transformers' `**kwargs`), e.g. `{enable_thinking: false}`. */
  templateKwargs?: Record<string, unknown>;
}

const specialTokenNames = ["bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"];

function twoDigits(value: number): string {
  return value.toString().padStart(2, "0");
}

/** Python `datetime.now().strftime(format)` for the directives chat templates use. */
function strftimeNow(format: string): string {
  const now = new Date();
  const months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
  const days = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const directives: Record<string, string> = {
    Y: String(now.getFullYear()),
    y: twoDigits(now.getFullYear() % 100),
    m: twoDigits(now.getMonth() + 1),
    d: twoDigits(now.getDate()),
    B: months[now.getMonth()],
    b: months[now.getMonth()].slice(0, 3),
    A: days[now.getDay()],
    a: days[now.getDay()].slice(0, 3),
    H: twoDigits(now.getHours()),
    M: twoDigits(now.getMinutes()),
    S: twoDigits(now.getSeconds()),
    "%": "%",
  };
  return format.replace(/%(.)/g, (whole, directive: string) => directives[directive] ?? whole);
}

/** A parsed chat template plus the special-token variables transformers passes to it. */
export class ChatTemplate {
  private readonly program: ReturnType<typeof parse>;
  /** The Qwen3 template, which has a direct rendering (qwen3-chat-template.ts) for the common shapes. */
  private readonly qwen3: boolean;

  constructor(
    readonly source: string,
    readonly specialTokens: Record<string, string> = {},
  ) {
    this.program = parse(tokenize(source, { lstrip_blocks: true, trim_blocks: true }));
    this.qwen3 = isQwen3Template(source);
  }

  /**
   * Loads a model directory the way transformers 5 does: `chat_template.jinja` wins over the
   * `chat_template` field of `tokenizer_config.json`; special tokens come from the config.
   */
  static fromDirectory(directory: string): ChatTemplate {
    const configPath = join(directory, "tokenizer_config.json");
    if (!existsSync(configPath)) {
      throw new DataError({
        code: "MODEL_DIR_INVALID",
        message: `${configPath} is missing; pass --model-dir pointing at a tokenizer directory (tokenizer.json + tokenizer_config.json)`,
      });
    }
    const config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>;
    const templatePath = join(directory, "chat_template.jinja");
    let source: unknown = existsSync(templatePath) ? readFileSync(templatePath, "utf8") : config.chat_template;
    if (Array.isArray(source)) source = (source as { name: string; template: string }[]).find((entry) => entry.name === "default")?.template;
    if (typeof source !== "string") {
      throw new DataError({
        code: "CHAT_TEMPLATE_MISSING",
        message: `${directory} has no chat template; add chat_template.jinja or a chat_template field to tokenizer_config.json`,
      });
    }
    const specialTokens: Record<string, string> = {};
    for (const name of specialTokenNames) {
      const token = config[name];
      if (typeof token === "string") specialTokens[name] = token;
      else if (token && typeof token === "object" && typeof (token as { content?: unknown }).content === "string")
        specialTokens[name] = (token as { content: string }).content;
    }
    return new ChatTemplate(source, specialTokens);
  }

  /** `tokenizer.apply_chat_template(messages, tools=…, add_generation_prompt=…, tokenize=False, **kwargs)`. */
  render(messages: readonly unknown[], options: ChatRenderOptions = {}): string {
    return this.renderDirect(messages, options) ?? this.renderJinja(messages, options);
  }

  /** The Qwen3 direct rendering, or undefined when the template or the call is not one it handles (kwargs: only `enable_thinking`). */
  renderDirect(messages: readonly unknown[], options: ChatRenderOptions): string | undefined {
    if (!this.qwen3) return undefined;
    const kwargs = options.templateKwargs ?? {};
    if (Object.keys(kwargs).some((name) => name !== "enable_thinking")) return undefined;
    const tools = options.tools ?? [];
    // each schema exactly as the template's `tool | tojson` serialises it
    const environment = tools.length > 0 ? new Environment() : undefined;
    const toolJson = tools.map((tool) => pythonJsonDumps(toPlainData(toRuntimeValue(tool, environment as Environment))));
    return renderQwen3({ messages, toolJson, addGenerationPrompt: options.addGenerationPrompt ?? false, enableThinking: kwargs.enable_thinking });
  }

  /** Renders through the jinja interpreter. */
  renderJinja(messages: readonly unknown[], options: ChatRenderOptions = {}): string {
    const environment = new Environment();
    const variables: Record<string, unknown> = {
      false: false,
      true: true,
      none: null,
      False: false,
      True: true,
      None: null,
      messages,
      tools: options.tools && options.tools.length > 0 ? options.tools : null,
      documents: null,
      add_generation_prompt: options.addGenerationPrompt ?? false,
      ...this.specialTokens,
      ...options.templateKwargs,
    };
    const declare = environment as unknown as { declareVariable(name: string, value: RuntimeValue): void };
    for (const [name, value] of Object.entries(variables)) declare.declareVariable(name, toRuntimeValue(value, environment));
    environment.set("raise_exception", (message: string) => {
      throw new DataError({ code: "CHAT_TEMPLATE_RAISED", message: `the chat template raised: ${message}` });
    });
    environment.set("strftime_now", strftimeNow);
    environment.set("range", (start: number, stop?: number, step = 1) => {
      const [from, to] = stop === undefined ? [0, start] : [start, stop];
      const values: number[] = [];
      for (let value = from; step > 0 ? value < to : value > to; value += step) values.push(value);
      return values;
    });
    const interpreter = new PythonInterpreter(environment);
    return interpreter.run(this.program).value as string;
  }
}
