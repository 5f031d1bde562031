import { DIRECTION_X, DIRECTION_Y } from "./constants.ts";
import { WALL_OBJECT, type WorldObject } from "./grid.ts";
import type { MiniGridWorld } from "./world.ts";

/**
 * The agent's 7×7 egocentric view and the fork's `gen_graph` text, formatted the way BALROG's
 * `BabyAITextCleanLangWrapper` sends it ("You see " removed, lines joined with "\n").
 *
 * View cell (vx, vy) — vx 0..6 left to right, vy 0..6 far to near — is the world cell
 * `agent + dir·(6−vy) + right·(vx−3)`; the agent sits at (3, 6). Scratch buffers are shared and reused,
 * so describing an observation allocates only the output string.
 */
const SIZE = 7;
const AGENT_INDEX = 6 * SIZE + 3;
const viewObjects: Array<WorldObject | null> = new Array<WorldObject | null>(SIZE * SIZE).fill(null);
const visible = new Uint8Array(SIZE * SIZE);
/** Encoded object type per view cell: 0 unseen, 1 empty, 2 wall, 4 door, 5 key, 6 ball, 7 box... */
const viewTypes = new Uint8Array(SIZE * SIZE);

const STEPS = Array.from({ length: 8 }, (_, count) => `${count} ${count === 1 ? "step" : "steps"}`);
const DOOR_STATES = ["open", "closed", "locked"];

/** Fills the view buffers (objects, visibility, encoded types) for the world's current state. */
export function computeView(world: MiniGridWorld): void {
  const directionX = DIRECTION_X[world.agentDir] as number;
  const directionY = DIRECTION_Y[world.agentDir] as number;
  const rightX = -directionY;
  const rightY = directionX;
  const { grid, width, height, agentX, agentY } = world;
  for (let vy = 0; vy < SIZE; vy++) {
    const ahead = SIZE - 1 - vy;
    for (let vx = 0; vx < SIZE; vx++) {
      const side = vx - 3;
      const x = agentX + directionX * ahead + rightX * side;
      const y = agentY + directionY * ahead + rightY * side;
      viewObjects[vy * SIZE + vx] = x < 0 || y < 0 || x >= width || y >= height ? WALL_OBJECT : (grid.cells[y * width + x] as WorldObject | null);
    }
  }
  // process_vis: sweep rows from the agent outwards; opaque cells are visible but stop the light.
  visible.fill(0);
  visible[AGENT_INDEX] = 1;
  for (let j = SIZE - 1; j >= 0; j--) {
    const row = j * SIZE;
    for (let i = 0; i < SIZE - 1; i++) {
      const index = row + i;
      if (visible[index] === 0) continue;
      const cell = viewObjects[index];
      if (cell && !cell.seeBehind()) continue;
      visible[index + 1] = 1;
      if (j > 0) {
        visible[index + 1 - SIZE] = 1;
        visible[index - SIZE] = 1;
      }
    }
    for (let i = SIZE - 1; i > 0; i--) {
      const index = row + i;
      if (visible[index] === 0) continue;
      const cell = viewObjects[index];
      if (cell && !cell.seeBehind()) continue;
      visible[index - 1] = 1;
      if (j > 0) {
        visible[index - 1 - SIZE] = 1;
        visible[index - SIZE] = 1;
      }
    }
  }
  for (let index = 0; index < SIZE * SIZE; index++) {
    const cell = viewObjects[index];
    viewTypes[index] = visible[index] === 0 ? 0 : cell ? cell.typeIndex : 1;
  }
}

/** Whether view cell (vx, vy) is visible after the last `computeView`. */
export function isVisible(vx: number, vy: number): boolean {
  return visible[vy * SIZE + vx] === 1;
}

/**
 * Appends a line. A module function rather than a closure per call: run through tsx, every closure
 * created also calls its name helper, and this runs on every reset and step.
 */
function joinLine(text: string, line: string): string {
  return text === "" ? line : `${text}\n${line}`;
}

/** The BALROG text observation (`long_term_context`) for the world's current state. */
export function describeObservation(world: MiniGridWorld): string {
  computeView(world);
  let text = "";
  if (world.carrying) text = joinLine(text, `You carry a ${world.carrying.color} ${world.carrying.type}`);
  for (let j = SIZE - 2; j >= 0; j--) {
    const type = viewTypes[j * SIZE + 3] as number;
    if (type <= 1) continue;
    if (type === 2) text = joinLine(text, `a wall ${STEPS[SIZE - 1 - j]} forward`);
    break;
  }
  for (let i = 2; i >= 0; i--) {
    const type = viewTypes[(SIZE - 1) * SIZE + i] as number;
    if (type <= 1) continue;
    if (type === 2) text = joinLine(text, `a wall ${STEPS[3 - i]} left`);
    break;
  }
  for (let i = 4; i < SIZE; i++) {
    const type = viewTypes[(SIZE - 1) * SIZE + i] as number;
    if (type <= 1) continue;
    if (type === 2) text = joinLine(text, `a wall ${STEPS[i - 3]} right`);
    break;
  }
  for (let i = 0; i < SIZE; i++) {
    for (let j = 0; j < SIZE; j++) {
      const index = j * SIZE + i;
      if (index === AGENT_INDEX || (viewTypes[index] as number) <= 2) continue;
      const cell = viewObjects[index] as WorldObject;
      const prefix = cell.type === "door" ? `a ${DOOR_STATES[cell.stateIndex()]} ${cell.color} door ` : `a ${cell.color} ${cell.type} `;
      const side = i - 3;
      const ahead = SIZE - 1 - j;
      let where: string;
      if (side === 0) where = `${STEPS[ahead]} forward`;
      else if (ahead === 0) where = `${STEPS[Math.abs(side)]} ${side < 0 ? "left" : "right"}`;
      else where = `${STEPS[Math.abs(side)]} ${side < 0 ? "left" : "right"} and ${STEPS[ahead]} forward`;
      text = joinLine(text, prefix + where);
    }
  }
  return text;
}
