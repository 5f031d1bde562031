import type { z } from "zod";
import { EnvConfigError } from "./errors.ts";

/**
 * Parses a user-supplied config (object or JSON text) with an environment's zod schema. Errors name the
 * bad key on one line: "search_plan_act: config key 'worldSize': expected number, received string".
 */
export function parseConfig<Config>(envId: string, schema: z.ZodType<Config>, input: unknown): Config {
  let value = input ?? {};
  if (typeof value === "string") {
    try {
      value = value.trim() === "" ? {} : JSON.parse(value);
    } catch (error) {
      throw new EnvConfigError({ message: `${envId}: --config is not valid JSON (${(error as Error).message}); pass an object such as '{"key": 1}'` });
    }
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (!issue) throw new EnvConfigError({ message: `${envId}: invalid config` });
  let path = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") path = (issue as { keys: string[] }).keys.join(", ");
  const where = path ? `config key '${path}'` : "config";
  throw new EnvConfigError({ message: `${envId}: ${where}: ${issue.message}` });
}
