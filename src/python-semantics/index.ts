/**
 * Python's semantics where ported benchmarks and templates need them exactly: float repr and round,
 * `json.dumps`/`json.loads` as Python sees JSON, `==` and other built-ins, and the `random` module.
 */
export { PythonFloat, pythonFloatRepr, pythonFormatFixed, pythonJsonFloat, pythonRound } from "./float.ts";
export {
  comparePythonStrings,
  dictEntries,
  dictGet,
  dictHas,
  dictKeys,
  dictValues,
  parsePythonJson,
  plainPythonJson,
  pythonJsonDumps,
  PythonJsonSyntaxError,
  type Dict,
  type ParseOptions,
  type PythonDumpsOptions,
  type PythonJsonValue,
} from "./json.ts";
export { PythonRandom } from "./random.ts";
export {
  PythonError,
  pythonCount,
  pythonEquals,
  pythonHashKey,
  pythonHasKey,
  pythonInt,
  pythonIterate,
  pythonLower,
  pythonRepr,
  pythonReprValue,
  pythonStr,
  pythonStrip,
  pythonTruthy,
  pythonTypeName,
} from "./values.ts";
