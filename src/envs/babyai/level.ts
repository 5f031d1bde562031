import { ACTION, type Color } from "./constants.ts";
import type { WorldObject } from "./grid.ts";
import {
  AfterInstruction,
  BeforeInstruction,
  GoToInstruction,
  ObjectDescription,
  OpenInstruction,
  PickupInstruction,
  PutNextInstruction,
  navigationsNeeded,
  type Instruction,
} from "./instructions.ts";
import { NumpyGenerator } from "./numpy-random.ts";
import { RoomGridWorld, type Room } from "./room-grid.ts";
import { LevelRejectedError, rejectLevel } from "./world.ts";

/** BALROG's five tasks: the level's action kind with spaces replaced by "_". */
export const BABYAI_TASKS = ["goto", "pickup", "open", "putnext", "pick_up_seq_go_to"] as const;
export type BabyAITask = (typeof BABYAI_TASKS)[number];

const ROOM_SIZE = 8;
const EXCLUDED_SUBSTRINGS = ["yellow box", "red key", "red door", "green ball", "grey door"];
const DOOR_COLORS: readonly Color[] = ["yellow", "green", "blue", "purple"];
const BEFORE_OR_AFTER = ["Before", "After"] as const;

/**
 * The fork's `Level_MixedTrainLocal` (`minigrid/envs/babyai/mixed_seq_levels.py`) with its action kind
 * given directly (BALROG gets it by rejection on construction, which draws from an unseeded RNG).
 * `reset(seed)` reproduces the reference's numpy draws one for one.
 */
export class MixedTrainLocalLevel extends RoomGridWorld {
  readonly task: BabyAITask;
  readonly numDistractors: number;
  instruction!: Instruction;
  mission = "";
  lockedRoom: Room | null = null;

  constructor(task: BabyAITask, numDistractors: number) {
    super(ROOM_SIZE, 1, task === "open" ? 2 : 1);
    this.task = task;
    this.numDistractors = numDistractors;
  }

  /** `RoomGridLevel.reset(seed)`: regenerates the level and the verifier; sets `max_steps`. */
  reset(seed: number | bigint | readonly number[]): void {
    this.random = new NumpyGenerator(seed);
    this.agentX = -1;
    this.agentY = -1;
    this.agentDir = -1;
    for (;;) {
      try {
        this.generateRooms();
        this.generateMission();
        this.validateInstruction(this.instruction);
      } catch (error) {
        if (error instanceof LevelRejectedError) continue;
        throw error;
      }
      break;
    }
    this.mission = this.instruction.surface(this);
    this.carrying = null;
    this.stepCount = 0;
    this.lastReward = 0;
    this.terminated = false;
    this.truncated = false;
    this.instruction.resetVerifier(this);
    this.maxSteps = navigationsNeeded(this.instruction) * ROOM_SIZE * ROOM_SIZE * this.numRows * this.numCols;
  }

  /** `RoomGridLevel.step`: the Minigrid step, position refresh on every drop, then the verifier. */
  step(action: number): void {
    this.baseStep(action);
    if (action === ACTION.drop) this.instruction.updatePositions();
    const status = this.instruction.verify(action);
    if (status === "success") {
      this.terminated = true;
      this.lastReward = this.successReward();
    } else if (status === "failure") {
      this.terminated = true;
      this.lastReward = 0;
    }
  }

  private excluded(): boolean {
    const surface = this.instruction.surface(this);
    return EXCLUDED_SUBSTRINGS.some((part) => surface.includes(part));
  }

  /** Draws the second object of putnext / seq: redrawn while identical to the first if that one is unique. */
  private drawSecond(first: WorldObject, objects: WorldObject[]): WorldObject {
    let second = this.randomElement(objects);
    if (first.type === second.type && first.color === second.color) {
      const matching = new ObjectDescription(first.type, first.color).findMatchingObjects(this);
      if (matching.length < 2) {
        while (first.type === second.type && first.color === second.color) second = this.randomElement(objects);
      }
    }
    return second;
  }

  private generateMission(): void {
    let accepted = false;
    let reachable = false;
    if (this.task === "open") {
      while (!accepted || !reachable) {
        this.regenerateRooms();
        const doorColor = this.randomElement(DOOR_COLORS);
        this.addLockedRoom(doorColor);
        this.connectAll();
        for (let j = 0; j < this.numRows; j++) {
          for (let i = 0; i < this.numCols; i++) {
            if (this.getRoom(i, j) !== this.lockedRoom) this.addDistractors(i, j, this.numDistractors);
          }
        }
        do this.placeAgent();
        while (this.roomFromPosition(this.agentX, this.agentY) === this.lockedRoom);
        reachable = this.objectsReachable();
        const colorInInstruction = this.randomElement([null, doorColor]);
        this.instruction = new OpenInstruction(new ObjectDescription("door", colorInInstruction));
        accepted = !this.excluded();
      }
      return;
    }
    while (!accepted || !reachable) {
      this.regenerateRooms();
      this.placeAgent();
      const extra = this.task === "goto" || this.task === "pickup" ? 1 : 2;
      const objects = this.addDistractors(null, null, this.numDistractors + extra);
      reachable = this.objectsReachable();
      const first = this.randomElement(objects);
      const firstDescription = new ObjectDescription(first.type, first.color);
      if (this.task === "goto") this.instruction = new GoToInstruction(firstDescription);
      else if (this.task === "pickup") this.instruction = new PickupInstruction(firstDescription);
      else {
        const second = this.drawSecond(first, objects);
        const secondDescription = new ObjectDescription(second.type, second.color);
        if (this.task === "putnext") this.instruction = new PutNextInstruction(firstDescription, secondDescription);
        else {
          const pickup = new PickupInstruction(firstDescription);
          const goTo = new GoToInstruction(secondDescription);
          this.instruction = this.randomElement(BEFORE_OR_AFTER) === "Before" ? new BeforeInstruction(pickup, goTo) : new AfterInstruction(goTo, pickup);
        }
      }
      accepted = !this.excluded();
    }
  }

  /** The fork's `add_locked_room(color)`: a locked door on an inner side, its key in another room. */
  private addLockedRoom(color: Color): void {
    let door: WorldObject;
    for (;;) {
      const i = this.randomInteger(0, this.numCols);
      const j = this.randomInteger(0, this.numRows);
      const side = this.randomInteger(0, 4);
      this.lockedRoom = this.getRoom(i, j);
      if (this.lockedRoom.neighbors[side] === null) continue;
      door = this.addDoor(i, j, side, color, true);
      break;
    }
    for (;;) {
      const i = this.randomInteger(0, this.numCols);
      const j = this.randomInteger(0, this.numRows);
      if (this.getRoom(i, j) === this.lockedRoom) continue;
      this.addObject(i, j, "key", door.color);
      break;
    }
  }

  /** `validate_instrs`: only PutNext can be rejected here (overlap, already adjacent, itself). */
  private validateInstruction(instruction: Instruction): void {
    if (instruction.kind === "before" || instruction.kind === "after") {
      this.validateInstruction(instruction.a);
      this.validateInstruction(instruction.b);
      return;
    }
    if (instruction.kind !== "putnext") return;
    instruction.resetVerifier(this);
    const fixedSet = instruction.fixed.objectSet;
    if (instruction.move.objectSet.some((object) => fixedSet.includes(object))) rejectLevel("there are objects that match both lhs and rhs of PutNext");
    if (instruction.objectsNext()) rejectLevel("objs already next to each other");
    if (instruction.move.objectSet.length === 1 && fixedSet.length === 1 && instruction.move.objectSet[0] === fixedSet[0]) {
      rejectLevel("cannot move an object next to itself");
    }
  }
}
