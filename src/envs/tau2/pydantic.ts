import { PythonError, pythonReprValue, pythonTypeName } from "../../python-semantics/index.ts";

/**
 * The checks pydantic (lax mode) makes when a tau2 tool builds a model from the arguments it was given
 * (`Task(title=...)`), with pydantic's own error text. tau2 does not validate tool arguments on the way
 * in; only such model constructions do, so only they are ported.
 */
export type FieldKind = "str" | "optional_str";

/** The pydantic release of the reference (its error texts link to the release's docs). */
const PYDANTIC_DOCS = "https://errors.pydantic.dev/2.13/v";

function fieldError(kind: FieldKind, value: unknown): { type: string; message: string } | null {
  if (kind === "optional_str" && (value === null || value === undefined)) return null;
  if (typeof value === "string") return null;
  return { type: "string_type", message: "Input should be a valid string" };
}

/** Raises pydantic's ValidationError text when a field's value does not fit its type. */
export function validateModel(model: string, fields: ReadonlyArray<readonly [name: string, kind: FieldKind, value: unknown]>): void {
  const errors = fields.flatMap(([name, kind, value]) => {
    const error = fieldError(kind, value);
    if (!error) return [];
    return [
      `${name}\n  ${error.message} [type=${error.type}, input_value=${pythonReprValue(value)}, input_type=${pythonTypeName(value)}]\n    For further information visit ${PYDANTIC_DOCS}/${error.type}`,
    ];
  });
  if (errors.length === 0) return;
  const count = `${errors.length} validation error${errors.length === 1 ? "" : "s"} for ${model}`;
  throw new PythonError("ValidationError", [count, ...errors].join("\n"));
}
