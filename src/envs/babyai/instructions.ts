import { ACTION, TYPE_INDEX, type Color, type ObjectType } from "./constants.ts";
import type { WorldObject } from "./grid.ts";
import type { MiniGridWorld } from "./world.ts";

/**
 * The BabyAI instruction language and its verifiers (`minigrid/envs/babyai/core/verifier.py`), limited to
 * what `MixedTrainLocal` generates: GoTo, Pickup, Open, PutNext, Before and After. Locations are never used.
 */
export type VerifyStatus = "continue" | "success" | "failure";

/** `ObjDesc(type, color)`: the objects an instruction refers to. Positions are flat `y·width + x`. */
export class ObjectDescription {
  readonly type: ObjectType;
  readonly color: Color | null;
  objectSet: WorldObject[] = [];
  positions: number[] = [];
  /** The type as `TYPE_INDEX`: the scan below compares numbers rather than strings (it runs several times per reset). */
  private readonly typeIndex: number;

  constructor(type: ObjectType, color: Color | null) {
    this.type = type;
    this.color = color;
    this.typeIndex = TYPE_INDEX[type];
  }

  /**
   * `find_matching_objs`: scans x outer, y inner. With `useLocation` (the default) the object set is
   * rebuilt; without it (after a drop) only already-tracked objects still on the grid keep a position.
   */
  findMatchingObjects(world: MiniGridWorld, useLocation = true): WorldObject[] {
    if (useLocation) this.objectSet = [];
    this.positions = [];
    const { grid, width, height } = world;
    for (let x = 0; x < width; x++) {
      for (let y = 0; y < height; y++) {
        const cell = grid.cells[y * width + x];
        if (!cell || cell.typeIndex !== this.typeIndex) continue;
        if (this.color !== null && cell.color !== this.color) continue;
        if (!useLocation && !this.objectSet.includes(cell)) continue;
        if (useLocation) this.objectSet.push(cell);
        this.positions.push(y * width + x);
      }
    }
    return this.objectSet;
  }

  /**
   * `surface(env)`: "the <noun>" for a unique match, "a <noun>" otherwise. With `rescan` false the
   * matches of the last scan are used (the level's reset scans once for the verifier and the mission).
   */
  surface(world: MiniGridWorld, rescan = true): string {
    if (rescan) this.findMatchingObjects(world);
    const noun = this.color === null ? this.type : `${this.color} ${this.type}`;
    return this.objectSet.length > 1 ? `a ${noun}` : `the ${noun}`;
  }
}

export type Instruction = GoToInstruction | PickupInstruction | OpenInstruction | PutNextInstruction | BeforeInstruction | AfterInstruction;

export class GoToInstruction {
  readonly kind = "goto";
  world!: MiniGridWorld;
  constructor(readonly description: ObjectDescription) {}
  surface(world: MiniGridWorld, rescan = true): string {
    return `go to ${this.description.surface(world, rescan)}`;
  }
  resetVerifier(world: MiniGridWorld): void {
    this.world = world;
    this.description.findMatchingObjects(world);
  }
  /** Success when the agent faces a (possibly stale) position of a matching object, after any action. */
  verify(): VerifyStatus {
    const front = this.world.frontY * this.world.width + this.world.frontX;
    return this.description.positions.includes(front) ? "success" : "continue";
  }
  updatePositions(): void {
    this.description.findMatchingObjects(this.world, false);
  }
}

export class PickupInstruction {
  readonly kind = "pickup";
  world!: MiniGridWorld;
  previousCarrying: WorldObject | null = null;
  constructor(readonly description: ObjectDescription) {}
  surface(world: MiniGridWorld, rescan = true): string {
    return `pick up ${this.description.surface(world, rescan)}`;
  }
  resetVerifier(world: MiniGridWorld): void {
    this.world = world;
    this.previousCarrying = null;
    this.description.findMatchingObjects(world);
  }
  verify(action: number): VerifyStatus {
    const previous = this.previousCarrying;
    this.previousCarrying = this.world.carrying;
    if (action !== ACTION.pickup) return "continue";
    if (previous === null && this.world.carrying !== null && this.description.objectSet.includes(this.world.carrying)) return "success";
    return "continue";
  }
  updatePositions(): void {
    this.description.findMatchingObjects(this.world, false);
  }
}

export class OpenInstruction {
  readonly kind = "open";
  world!: MiniGridWorld;
  constructor(readonly description: ObjectDescription) {}
  surface(world: MiniGridWorld, rescan = true): string {
    return `open ${this.description.surface(world, rescan)}`;
  }
  resetVerifier(world: MiniGridWorld): void {
    this.world = world;
    this.description.findMatchingObjects(world);
  }
  verify(action: number): VerifyStatus {
    if (action !== ACTION.toggle) return "continue";
    const front = this.world.grid.get(this.world.frontX, this.world.frontY);
    if (front !== null && front.isOpen && this.description.objectSet.includes(front)) return "success";
    return "continue";
  }
  updatePositions(): void {
    this.description.findMatchingObjects(this.world, false);
  }
}

function nextTo(a: number, b: number, width: number): boolean {
  const ax = a % width;
  const bx = b % width;
  return Math.abs(ax - bx) + Math.abs((a - ax) / width - (b - bx) / width) === 1;
}

export class PutNextInstruction {
  readonly kind = "putnext";
  world!: MiniGridWorld;
  previousCarrying: WorldObject | null = null;
  constructor(
    readonly move: ObjectDescription,
    readonly fixed: ObjectDescription,
  ) {}
  surface(world: MiniGridWorld, rescan = true): string {
    return `put ${this.move.surface(world, rescan)} next to ${this.fixed.surface(world, rescan)}`;
  }
  resetVerifier(world: MiniGridWorld): void {
    this.world = world;
    this.previousCarrying = null;
    this.move.findMatchingObjects(world);
    this.fixed.findMatchingObjects(world);
  }
  /** `objs_next`: some movable object is already next to a fixed position. */
  objectsNext(): boolean {
    const width = this.world.width;
    for (const object of this.move.objectSet) {
      const position = object.currentY * width + object.currentX;
      for (const fixed of this.fixed.positions) if (object.currentX >= 0 && nextTo(position, fixed, width)) return true;
    }
    return false;
  }
  verify(action: number): VerifyStatus {
    const previous = this.previousCarrying;
    this.previousCarrying = this.world.carrying;
    if (action !== ACTION.drop) return "continue";
    const width = this.world.width;
    for (const object of this.move.objectSet) {
      if (previous !== object) continue;
      const position = object.currentY * width + object.currentX;
      for (const fixed of this.fixed.positions) if (object.currentX >= 0 && nextTo(position, fixed, width)) return "success";
    }
    return "continue";
  }
  updatePositions(): void {
    this.move.findMatchingObjects(this.world, false);
    this.fixed.findMatchingObjects(this.world, false);
  }
}

type ActionInstruction = GoToInstruction | PickupInstruction | OpenInstruction | PutNextInstruction;

/**
 * The sequence forms share their state: `first` is a's status, `second` is b's. One of the two is verified
 * until it succeeds, then the other (in the same step once the earlier one succeeds).
 */
abstract class SequenceInstruction {
  first: VerifyStatus | false = false;
  second: VerifyStatus | false = false;
  constructor(
    readonly a: ActionInstruction,
    readonly b: ActionInstruction,
  ) {}
  resetVerifier(world: MiniGridWorld): void {
    this.a.resetVerifier(world);
    this.b.resetVerifier(world);
    this.first = false;
    this.second = false;
  }
  updatePositions(): void {
    this.a.updatePositions();
    this.b.updatePositions();
  }
  protected verifyInOrder(action: number, aFirst: boolean): VerifyStatus {
    const earlierStatus = aFirst ? this.first : this.second;
    const later = aFirst ? this.b : this.a;
    if (earlierStatus === "success") {
      const status = later.verify(action);
      if (aFirst) this.second = status;
      else this.first = status;
      return status === "failure" || status === "success" ? status : "continue";
    }
    const status = (aFirst ? this.a : this.b).verify(action);
    if (aFirst) this.first = status;
    else this.second = status;
    if (status === "failure") return "failure";
    if (status === "success") return this.verifyInOrder(action, aFirst);
    return "continue";
  }
}

/** `BeforeInstr(a, b)`: "a, then b". When a succeeds, b is verified in the same step. */
export class BeforeInstruction extends SequenceInstruction {
  readonly kind = "before";
  surface(world: MiniGridWorld, rescan = true): string {
    return `${this.a.surface(world, rescan)}, then ${this.b.surface(world, rescan)}`;
  }
  verify(action: number): VerifyStatus {
    return this.verifyInOrder(action, true);
  }
}

/** `AfterInstr(a, b)`: "a after you b": b is verified first, then a (in the same step once b succeeds). */
export class AfterInstruction extends SequenceInstruction {
  readonly kind = "after";
  surface(world: MiniGridWorld, rescan = true): string {
    return `${this.a.surface(world, rescan)} after you ${this.b.surface(world, rescan)}`;
  }
  verify(action: number): VerifyStatus {
    return this.verifyInOrder(action, false);
  }
}

/** `num_navs_needed`: PutNext needs 2 navigations, other actions 1, sequences the sum. */
export function navigationsNeeded(instruction: Instruction): number {
  if (instruction.kind === "before" || instruction.kind === "after") return navigationsNeeded(instruction.a) + navigationsNeeded(instruction.b);
  return instruction.kind === "putnext" ? 2 : 1;
}
