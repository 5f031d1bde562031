/** The tasks whose snapshots are kept as golden files (__golden__/) and replayed across processes. */
export const GOLDEN_ADDRESSES: Record<string, Array<{ split: string; seed: number; index: number }>> = {
  search_plan_act: [
    { split: "eval", seed: 1, index: 0 },
    { split: "eval", seed: 1, index: 2 },
    { split: "eval", seed: 7, index: 13 },
    { split: "train", seed: 0, index: 5 },
    { split: "train", seed: 42, index: 99 },
  ],
  search_plan_ood: [
    { split: "ood", seed: 1, index: 0 },
    { split: "ood", seed: 1, index: 2 },
    { split: "ood", seed: 7, index: 13 },
    { split: "ood", seed: 0, index: 5 },
    { split: "ood", seed: 42, index: 99 },
  ],
};
