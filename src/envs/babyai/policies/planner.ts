import { ACTION, DIRECTION_X, DIRECTION_Y } from "../constants.ts";
import type { WorldObject } from "../grid.ts";
import type { GoToInstruction, Instruction, OpenInstruction, PickupInstruction, PutNextInstruction } from "../instructions.ts";
import type { MixedTrainLocalLevel } from "../level.ts";

/**
 * A full-information planner for MixedTrainLocal levels: it reads the true grid and the instruction's
 * verifier state, picks the current subgoal (like the BabyAI bot's subgoal stack: fetch, carry, face,
 * interact) and takes the first action of a shortest path over (x, y, direction) states. It does not
 * reproduce the reference bot's exploratory action sequences, only its outcomes (spec §6).
 */

/** Breadth-first search from the agent's pose to the nearest pose whose front cell satisfies `goal`. */
export function firstActionToFace(level: MixedTrainLocalLevel, goal: (position: number) => boolean): number | null {
  const { width, height, grid } = level;
  const stateCount = width * height * 4;
  const firstAction = new Int8Array(stateCount).fill(-1);
  const start = (level.agentY * width + level.agentX) * 4 + level.agentDir;
  const queue = new Int32Array(stateCount);
  let head = 0;
  let tail = 0;
  queue[tail++] = start;
  firstAction[start] = 7;
  while (head < tail) {
    const state = queue[head++] as number;
    const direction = state & 3;
    const position = state >> 2;
    const x = position % width;
    const y = (position - x) / width;
    const frontX = x + (DIRECTION_X[direction] as number);
    const frontY = y + (DIRECTION_Y[direction] as number);
    const inside = frontX >= 0 && frontY >= 0 && frontX < width && frontY < height;
    if (state !== start && inside && goal(frontY * width + frontX)) return firstAction[state] as number;
    const origin = firstAction[state] as number;
    const successors: Array<[number, number]> = [
      [ACTION.left, position * 4 + ((direction + 3) & 3)],
      [ACTION.right, position * 4 + ((direction + 1) & 3)],
    ];
    if (inside) {
      const front = grid.get(frontX, frontY);
      if (front === null || front.canOverlap()) successors.push([ACTION.forward, (frontY * width + frontX) * 4 + direction]);
    }
    for (const [action, next] of successors) {
      if ((firstAction[next] as number) !== -1) continue;
      firstAction[next] = state === start ? action : origin;
      queue[tail++] = next;
    }
  }
  return null;
}

function frontPosition(level: MixedTrainLocalLevel): number {
  return level.frontY * level.width + level.frontX;
}

function onGrid(objects: WorldObject[], width: number): Set<number> {
  const positions = new Set<number>();
  for (const object of objects) if (object.currentX >= 0) positions.add(object.currentY * width + object.currentX);
  return positions;
}

/** Face a cell satisfying `goal`, then `interaction`; turn left when nothing is reachable (never seen in tests). */
function faceThen(level: MixedTrainLocalLevel, goal: (position: number) => boolean, interaction: number): number {
  if (goal(frontPosition(level))) return interaction;
  return firstActionToFace(level, goal) ?? ACTION.left;
}

function dropAnywhere(level: MixedTrainLocalLevel): number {
  return faceThen(level, (position) => level.grid.cells[position] === null, ACTION.drop);
}

function pickUpOneOf(level: MixedTrainLocalLevel, objects: WorldObject[]): number {
  if (level.carrying !== null) return dropAnywhere(level);
  const targets = onGrid(objects, level.width);
  return faceThen(level, (position) => targets.has(position), ACTION.pickup);
}

function goTo(level: MixedTrainLocalLevel, instruction: GoToInstruction): number {
  const targets = new Set(instruction.description.positions);
  return faceThen(level, (position) => targets.has(position), ACTION.left);
}

function pickup(level: MixedTrainLocalLevel, instruction: PickupInstruction): number {
  return pickUpOneOf(level, instruction.description.objectSet);
}

function open(level: MixedTrainLocalLevel, instruction: OpenInstruction): number {
  const door = instruction.description.objectSet[0] as WorldObject;
  const doorPosition = door.currentY * level.width + door.currentX;
  if (door.isLocked) {
    const carrying = level.carrying;
    if (carrying === null || carrying.type !== "key" || carrying.color !== door.color) {
      const keys = level.grid.cells.filter((cell): cell is WorldObject => cell !== null && cell.type === "key" && cell.color === door.color);
      return pickUpOneOf(level, keys);
    }
  }
  return faceThen(level, (position) => position === doorPosition, ACTION.toggle);
}

function putNext(level: MixedTrainLocalLevel, instruction: PutNextInstruction): number {
  const carrying = level.carrying;
  if (carrying === null || !instruction.move.objectSet.includes(carrying)) return pickUpOneOf(level, instruction.move.objectSet);
  const width = level.width;
  const fixed = onGrid(instruction.fixed.objectSet, width);
  const isDropCell = (position: number) => {
    if (level.grid.cells[position] !== null) return false;
    return fixed.has(position - 1) || fixed.has(position + 1) || fixed.has(position - width) || fixed.has(position + width);
  };
  return faceThen(level, isDropCell, ACTION.drop);
}

function plan(level: MixedTrainLocalLevel, instruction: Instruction): number {
  switch (instruction.kind) {
    case "goto":
      return goTo(level, instruction);
    case "pickup":
      return pickup(level, instruction);
    case "open":
      return open(level, instruction);
    case "putnext":
      return putNext(level, instruction);
    case "before":
      return plan(level, instruction.first === "success" ? instruction.b : instruction.a);
    case "after":
      return plan(level, instruction.second === "success" ? instruction.a : instruction.b);
  }
}

/** The next Minigrid action toward completing the level's instruction. */
export function nextAction(level: MixedTrainLocalLevel): number {
  return plan(level, level.instruction);
}
