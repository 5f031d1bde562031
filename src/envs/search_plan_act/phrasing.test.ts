import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getEnvironment } from "../registry.ts";
import type { SearchPlanTask } from "./task.ts";
import { THEMES } from "./themes.ts";

const FAMILY_NAMES = ["lookup", "update", "link", "copy", "conditional", "composite"] as const;

function generate(envId: string, split: string, seed: number, index: number, raw: object): SearchPlanTask {
  const env = getEnvironment(envId);
  return env.generate({ split, seed, index, config: env.configSchema.parse(raw) }) as SearchPlanTask;
}

function familyConfig(theme: string, family: string): object {
  if (family === "impossible") return { themes: [theme], impossibleRate: 1 };
  return { themes: [theme], impossibleRate: 0, familyWeights: Object.fromEntries(FAMILY_NAMES.map((name) => [name, name === family ? 1 : 0])) };
}

/** The text a reader sees as prose: quoted record names, quoted relation names and "(field `x`)" notes removed. */
function prose(text: string): string {
  return text.replace(/ \(field `[a-z_]+`\)/g, "").replace(/"[^"]*"/g, '""');
}

describe("search_plan task text names fields by phrase", () => {
  it("every field of every theme has a phrase", () => {
    for (const theme of THEMES)
      for (const type of theme.types) for (const field of type.fields) assert.ok(field.phrase.trim().length > 0, `${theme.name}.${type.name}.${field.name}`);
  });

  it("no raw field name in the prose of 1,600 tasks over every theme and family", () => {
    let tasks = 0;
    for (const theme of THEMES) {
      const envId = theme.ood ? "search_plan_ood" : "search_plan_act";
      const split = theme.ood ? "ood" : "eval";
      // Field names that are not also ordinary words of the text (an enum value such as "played", a word of a phrase such as "departs from").
      const values = new Set(theme.types.flatMap((type) => type.fields.flatMap((field) => field.values ?? [])));
      const phrases = [...theme.types.flatMap((type) => type.fields.map((field) => field.phrase)), ...theme.relations.map((relation) => relation.phrase)];
      const phraseWords = new Set(phrases.flatMap((phrase) => phrase.split(/[^A-Za-z0-9_]+/)));
      const names = [...new Set(theme.types.flatMap((type) => type.fields.filter((field) => field.phrase !== field.name).map((field) => field.name)))].filter(
        (name) => !values.has(name) && !phraseWords.has(name),
      );
      for (const family of [...FAMILY_NAMES, "impossible"]) {
        for (let index = 0; index < 28; index++) {
          const task = generate(envId, split, 11, index, familyConfig(theme.name, family));
          tasks++;
          const text = prose(task.text);
          for (const name of names) assert.doesNotMatch(text, new RegExp(`\\b${name}\\b`), `${theme.name}/${family}/${index}: '${name}' in: ${task.text}`);
          const withoutValues = text.replace(/\b[a-z]+(?:_[a-z]+)+\b/g, (word) => (values.has(word) ? "" : word));
          assert.doesNotMatch(withoutValues, /\b[a-z]+_[a-z_]+\b/, `${theme.name}/${family}/${index}: snake_case word in: ${task.text}`);
          for (const goal of task.goals) {
            const field =
              goal.kind === "lookup"
                ? goal.field
                : goal.kind === "update" || goal.kind === "conditional"
                  ? goal.field
                  : goal.kind === "copy"
                    ? goal.toField
                    : null;
            if (field === null) continue;
            const phrases = theme.types.flatMap((type) => type.fields.filter((spec) => spec.name === field).map((spec) => spec.phrase));
            assert.ok(
              phrases.some((phrase) => task.text.includes(phrase)),
              `${theme.name}/${family}/${index}: no phrase of '${field}' in: ${task.text}`,
            );
          }
        }
      }
    }
    assert.equal(tasks, 8 * 7 * 28);
  });

  it("rewrites sentences as a reader expects (literal examples)", () => {
    const config = {};
    assert.equal(
      generate("search_plan_act", "eval", 3, 3, config).text,
      'Copy the join date of the scientist named "Pulkiovstaerk Ulianuford" into the join date (field `joined`) of the scientist named "Systrun Thealamore".',
    );
    assert.equal(
      generate("search_plan_act", "eval", 3, 5, config).text,
      "What is the status of the route that the shipment with tracking number TRK-90462 follows?",
    );
    assert.equal(
      generate("search_plan_act", "eval", 3, 6, config).text,
      'Change the salary of the scientist that the grant named "Aleathaford Grant" is awarded to, setting it to 77800.',
    );
    assert.equal(
      generate("search_plan_act", "eval", 3, 9, config).text,
      'What is the membership tier of the member reached from the member with library card number LC-59030 by following the links "favours", then "lives_near", then "curated_by"?',
    );
    assert.equal(generate("search_plan_act", "eval", 3, 11, config).text, 'Set the seniority level of the employee named "Ulevthum Coruviell" to 4.');
    assert.match(
      generate("search_plan_ood", "ood", 3, 2, config).text,
      /^Do the following, in order: \(1\) Set the opening date \(field `opened`\) of the airport reached from the flight named "Hamamore Service" by following the links "departs_from", then "operated_by", then "based_at" to 2013-08-25\. /,
    );
  });
});
