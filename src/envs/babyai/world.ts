import { ToolgymError } from "../../core/index.ts";
import { ACTION, DIRECTION_X, DIRECTION_Y } from "./constants.ts";
import { Grid, type WorldObject } from "./grid.ts";
import type { NumpyGenerator } from "./numpy-random.ts";

/**
 * A rejected level draw: Minigrid's `RecursionError` (placement ran out of tries) and `RejectSampling`
 * (an invalid instruction). Both restart level generation without reseeding; never seen by callers.
 */
export class LevelRejectedError extends ToolgymError {
  constructor(message: string) {
    super({ code: "BABYAI_LEVEL_REJECTED", message: `${message}; level generation retries by itself, this should never surface` });
  }
}

/**
 * Throws a LevelRejectedError without capturing a stack trace: rejections are routine control flow
 * (several per reset at 8 distractors), caught by the level's retry loop, and a stack capture cost
 * more than the draw being rejected.
 */
export function rejectLevel(message: string): never {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    throw new LevelRejectedError(message);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export type RejectFunction = (world: MiniGridWorld, x: number, y: number) => boolean;

/** `MiniGridEnv`: the grid, the agent and `step`, minus rendering. */
export class MiniGridWorld {
  width: number;
  height: number;
  grid: Grid;
  agentX = -1;
  agentY = -1;
  agentDir = -1;
  carrying: WorldObject | null = null;
  stepCount = 0;
  maxSteps = 0;
  /** Outcome of the last `step`, kept in fields so the hot path allocates nothing. */
  lastReward = 0;
  terminated = false;
  truncated = false;
  protected random!: NumpyGenerator;

  constructor(width: number, height: number) {
    this.width = width;
    this.height = height;
    this.grid = new Grid(width, height);
  }

  get frontX(): number {
    return this.agentX + (DIRECTION_X[this.agentDir] as number);
  }

  get frontY(): number {
    return this.agentY + (DIRECTION_Y[this.agentDir] as number);
  }

  randomInteger(low: number, high: number): number {
    return this.random.integers(low, high);
  }

  randomElement<T>(items: readonly T[]): T {
    return this.random.element(items);
  }

  /** `place_obj`: draws x then y until the cell is free, not the agent's and not rejected. */
  placeObject(object: WorldObject | null, topX: number, topY: number, sizeX: number, sizeY: number, reject: RejectFunction | null, maxTries: number): number {
    const left = Math.max(topX, 0);
    const top = Math.max(topY, 0);
    const right = Math.min(left + sizeX, this.width);
    const bottom = Math.min(top + sizeY, this.height);
    let tries = 0;
    let x = 0;
    let y = 0;
    for (;;) {
      if (tries > maxTries) rejectLevel("rejection sampling failed in place_obj");
      tries++;
      x = this.random.integers(left, right);
      y = this.random.integers(top, bottom);
      if (this.grid.get(x, y) !== null) continue;
      if (x === this.agentX && y === this.agentY) continue;
      if (reject && reject(this, x, y)) continue;
      break;
    }
    this.grid.set(x, y, object);
    if (object) {
      object.initX = object.currentX = x;
      object.initY = object.currentY = y;
    }
    return y * this.width + x;
  }

  /** `MiniGridEnv.place_agent`: a free cell, then a random direction. */
  placeAgentIn(topX: number, topY: number, sizeX: number, sizeY: number, maxTries: number): void {
    this.agentX = -1;
    this.agentY = -1;
    const position = this.placeObject(null, topX, topY, sizeX, sizeY, null, maxTries);
    this.agentX = position % this.width;
    this.agentY = (position - this.agentX) / this.width;
    this.agentDir = this.random.integers(0, 4);
  }

  /** `1 − 0.9 · step_count / max_steps`. */
  successReward(): number {
    return 1 - 0.9 * (this.stepCount / this.maxSteps);
  }

  /** `MiniGridEnv.step` without the observation: updates the world and the outcome fields. */
  baseStep(action: number): void {
    this.stepCount++;
    this.lastReward = 0;
    this.terminated = false;
    this.truncated = false;
    const frontX = this.frontX;
    const frontY = this.frontY;
    const front = this.grid.get(frontX, frontY);
    switch (action) {
      case ACTION.left:
        this.agentDir = (this.agentDir + 3) % 4;
        break;
      case ACTION.right:
        this.agentDir = (this.agentDir + 1) % 4;
        break;
      case ACTION.forward:
        if (front === null || front.canOverlap()) {
          this.agentX = frontX;
          this.agentY = frontY;
        }
        if (front !== null && front.type === "goal") {
          this.terminated = true;
          this.lastReward = this.successReward();
        }
        if (front !== null && front.type === "lava") this.terminated = true;
        break;
      case ACTION.pickup:
        if (front !== null && front.canPickup() && this.carrying === null) {
          this.carrying = front;
          front.currentX = -1;
          front.currentY = -1;
          this.grid.set(frontX, frontY, null);
        }
        break;
      case ACTION.drop:
        if (front === null && this.carrying !== null) {
          this.grid.set(frontX, frontY, this.carrying);
          this.carrying.currentX = frontX;
          this.carrying.currentY = frontY;
          this.carrying = null;
        }
        break;
      case ACTION.toggle:
        if (front !== null) this.toggle(front, frontX, frontY);
        break;
      default:
        break;
    }
    if (this.stepCount >= this.maxSteps) this.truncated = true;
  }

  /** `WorldObj.toggle`: doors open/close or unlock with a same-coloured key; a box vanishes (contains None). */
  private toggle(object: WorldObject, x: number, y: number): void {
    if (object.type === "door") {
      if (object.isLocked) {
        if (this.carrying !== null && this.carrying.type === "key" && this.carrying.color === object.color) {
          object.isLocked = false;
          object.isOpen = true;
        }
        return;
      }
      object.isOpen = !object.isOpen;
      return;
    }
    if (object.type === "box") this.grid.set(x, y, null);
  }
}
