/** What a script has seen in tool results: record ids, names and field values, for honest reuse. */
export interface Observations {
  ids: string[];
  /** Record id → type, from search hits and reads. */
  types: Map<string, string>;
  /** Names and field values, as strings, in the order seen. */
  values: string[];
  /** Full records read. */
  records: Map<string, { id: string; type: string; name: string; fields: Record<string, string | number> }>;
}

export function createObservations(): Observations {
  return { ids: [], types: new Map(), values: [], records: new Map() };
}

function addId(observations: Observations, id: unknown, type: unknown): void {
  if (typeof id !== "string") return;
  if (!observations.types.has(id)) observations.ids.push(id);
  if (typeof type === "string") observations.types.set(id, type);
  else if (!observations.types.has(id)) observations.types.set(id, "");
}

/** Records everything a tool result reveals. */
export function observe(observations: Observations, result: unknown): void {
  if (!result || typeof result !== "object") return;
  const value = result as Record<string, unknown>;
  if (Array.isArray(value.hits)) {
    for (const hit of value.hits as Array<Record<string, unknown>>) {
      addId(observations, hit.id, hit.type);
      if (typeof hit.name === "string") observations.values.push(hit.name);
      if (typeof hit.snippet === "string") {
        for (const part of hit.snippet.split("; ")) observations.values.push(part.slice(part.indexOf(": ") + 2));
      }
    }
  }
  if (typeof value.id === "string" && value.fields && typeof value.fields === "object") {
    addId(observations, value.id, value.type);
    observations.records.set(value.id, value as never);
    observations.values.push(String(value.name));
    for (const field of Object.values(value.fields as Record<string, unknown>)) observations.values.push(String(field));
    for (const link of (value.links as Array<Record<string, unknown>>) ?? []) {
      addId(observations, link.target_id, undefined);
      if (typeof link.target_name === "string") observations.values.push(link.target_name);
    }
  }
}

/** Words of the task text worth searching for (capitalised words and codes first). */
export function taskWords(text: string): string[] {
  const words = text.match(/[A-Za-z][A-Za-z0-9_-]{3,}/g) ?? [];
  const unique = [...new Set(words)];
  return [...unique.filter((word) => /^[A-Z]/.test(word)), ...unique.filter((word) => !/^[A-Z]/.test(word))];
}
