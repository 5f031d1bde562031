import { z } from "zod";

export const FAMILIES = ["lookup", "update", "link", "copy", "conditional", "composite"] as const;
/** The reward's formula: the environment's own, or the deliberately exploitable one the watch is tested on. */
export const REWARD_VARIANTS = ["standard", "without_outcome"] as const;
export type RewardVariant = (typeof REWARD_VARIANTS)[number];

export type Family = (typeof FAMILIES)[number] | "impossible";

export interface ConfigDefaults {
  worldSize: number;
  minHops: number;
  maxHops: number;
  nearDuplicateRate: number;
  sharedWordRate: number;
  nameClusterSize: number;
  weights: Record<(typeof FAMILIES)[number], number>;
}

/** The config schema of a search_plan environment; the two environments differ only in defaults. */
export function createConfigSchema(defaults: ConfigDefaults) {
  const weight = (family: (typeof FAMILIES)[number]) => z.number().min(0).max(100).default(defaults.weights[family]);
  return z
    .strictObject({
      /** Records per world. */
      worldSize: z.number().int().min(15).max(400).default(defaults.worldSize),
      /** Themes to draw from; default: every theme of the split (train/eval never get OOD themes). */
      themes: z.array(z.string()).min(1).optional(),
      /** Records visited by a lookup chain (1 = a field of the named record). */
      minHops: z.number().int().min(1).max(6).default(defaults.minHops),
      maxHops: z.number().int().min(1).max(6).default(defaults.maxHops),
      /** Share of tasks whose goal cannot be achieved. */
      impossibleRate: z.number().min(0).max(1).default(0.1),
      /** Share of records whose name is a look-alike of another ("Calloway" / "Galloway"). */
      nearDuplicateRate: z.number().min(0).max(0.9).default(defaults.nearDuplicateRate),
      /** Share of thing names that reuse a person's surname (records of other types sharing a word). */
      sharedWordRate: z.number().min(0).max(1).default(defaults.sharedWordRate),
      /** People sharing one surname; tasks then name someone by surname + attribute (paginated search). */
      nameClusterSize: z.number().int().min(0).max(40).default(defaults.nameClusterSize),
      /** Relative weight of each task family. */
      familyWeights: z
        .strictObject({
          lookup: weight("lookup"),
          update: weight("update"),
          link: weight("link"),
          copy: weight("copy"),
          conditional: weight("conditional"),
          composite: weight("composite"),
        })
        .prefault({}),
      /** Extra tool calls over the plan length before the stop score starts to decay. */
      slack: z.number().int().min(0).max(50).default(4),
      /**
       * `standard`: the reward of about.md. `without_outcome`: a deliberately exploitable variant for testing the
       * reward-hacking watch (no outcome term, fewer calls pay more: finishing at once scores 1); never train on it.
       */
      reward: z.enum(REWARD_VARIANTS).default("standard"),
    })
    .refine((config) => config.minHops <= config.maxHops, { message: "minHops must not exceed maxHops", path: ["maxHops"] })
    .refine((config) => Object.values(config.familyWeights).some((value) => value > 0), {
      message: "at least one family weight must be positive",
      path: ["familyWeights"],
    });
}

export type SearchPlanConfig = z.infer<ReturnType<typeof createConfigSchema>>;

export const IN_DISTRIBUTION_DEFAULTS: ConfigDefaults = {
  worldSize: 48,
  minHops: 1,
  maxHops: 4,
  nearDuplicateRate: 0.15,
  sharedWordRate: 0.15,
  nameClusterSize: 0,
  weights: { lookup: 3, update: 2, link: 1, copy: 1, conditional: 1, composite: 1 },
};

export const OOD_DEFAULTS: ConfigDefaults = {
  worldSize: 160,
  minHops: 4,
  maxHops: 6,
  nearDuplicateRate: 0.35,
  sharedWordRate: 0.3,
  nameClusterSize: 14,
  weights: { lookup: 2, update: 1, link: 1, copy: 1, conditional: 2, composite: 3 },
};
