/** Minigrid constants (`minigrid/core/constants.py`, `actions.py`). */

/** `COLOR_NAMES = sorted(COLORS)`: the sorted order matters for random draws. */
export const COLOR_NAMES = ["blue", "green", "grey", "purple", "red", "yellow"] as const;
export type Color = (typeof COLOR_NAMES)[number];

export type ObjectType = "wall" | "floor" | "door" | "key" | "ball" | "box" | "goal" | "lava";

/** `OBJECT_TO_IDX`: 0 unseen, 1 empty, then the object types. */
export const TYPE_INDEX: Record<ObjectType, number> = { wall: 2, floor: 3, door: 4, key: 5, ball: 6, box: 7, goal: 8, lava: 9 };
export const UNSEEN = 0;
export const EMPTY = 1;
export const WALL = 2;

/** `DIR_TO_VEC`: 0 right, 1 down, 2 left, 3 up; x is the column, y the row (pointing down). */
export const DIRECTION_X = [1, 0, -1, 0] as const;
export const DIRECTION_Y = [0, 1, 0, -1] as const;

/** Minigrid action ids; BALROG offers the first six, in this order. */
export const ACTION = { left: 0, right: 1, forward: 2, pickup: 3, drop: 4, toggle: 5, done: 6 } as const;

/** BALROG's `BABYAI_ACTION_SPACE`: the list index is the Minigrid action id. */
export const ACTION_NAMES = ["turn left", "turn right", "go forward", "pick up", "drop", "toggle"] as const;
export type ActionName = (typeof ACTION_NAMES)[number];

export const ACTION_BY_NAME: ReadonlyMap<string, number> = new Map(ACTION_NAMES.map((name, index) => [name, index]));
