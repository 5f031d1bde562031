import { ACTION, type Color, type ObjectType } from "./constants.ts";
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
import { NumpyGenerator, entropyWords } from "./numpy-random.ts";
import { RoomGridWorld, type Room } from "./room-grid.ts";
import { LevelRejectedError } from "./world.ts";

/** BALROG's five tasks: the level's action kind with spaces replaced by "_". */
export const BABYAI_TASKS = ["goto", "pickup", "open", "putnext", "pick_up_seq_go_to"] as const;
export type BabyAITask = (typeof BABYAI_TASKS)[number];

const ROOM_SIZE = 8;
/**
 * The fork rejects a mission whose text contains "yellow box", "red key", "red door", "green ball" or
 * "grey door". A mission's text is fixed words ("go to", "pick up", "open", "put", "next to", "then",
 * "after you", "a", "the") around one "[colour ]type" noun per object description, and no fixed word
 * ends in a colour, so the text contains "<colour> <type>" exactly when a description names that colour
 * and type. The check runs on the descriptions' (colour, type) pairs, without building the text.
 */
const EXCLUDED_PAIRS: ReadonlyArray<readonly [Color, ObjectType]> = [
  ["yellow", "box"],
  ["red", "key"],
  ["red", "door"],
  ["green", "ball"],
  ["grey", "door"],
];
const DOOR_COLORS: readonly Color[] = ["yellow", "green", "blue", "purple"];
const BEFORE_OR_AFTER = ["Before", "After"] as const;

/**
 * The generator state each slow level's accepted draw started from, by level (levelKey): `putnext` with 16
 * distractors rejects ~100,000 draws at some seeds (over a second), and a task is drawn again by `start`,
 * `solution` and `secrets`. Replaying from the state gives the same level; bounded, oldest out first.
 */
const ACCEPTED_DRAWS = new Map<string, readonly number[]>();
const ACCEPTED_DRAWS_LIMIT = 4096;
/** Levels accepted within fewer draws than this (about a millisecond) are drawn again rather than kept. */
const REMEMBERED_AFTER = 100;
/** Thrown (not an Error: no stack to capture) when `drawLevel` runs out of draws. */
const OUT_OF_DRAWS = Symbol("out of level draws");

/** The key of a level in ACCEPTED_DRAWS: its task, distractor count and seed words. */
export function levelKey(task: BabyAITask, numDistractors: number, seed: number | bigint | readonly number[]): string {
  return `${task}/${numDistractors}/${entropyWords(seed).join(",")}`;
}

/** Remembers the generator state a level's accepted draw starts from (a copy); the oldest entry goes past the bound. */
export function rememberAcceptedDraw(key: string, state: readonly number[]): void {
  if (ACCEPTED_DRAWS.has(key)) return;
  if (ACCEPTED_DRAWS.size >= ACCEPTED_DRAWS_LIMIT) ACCEPTED_DRAWS.delete(ACCEPTED_DRAWS.keys().next().value as string);
  ACCEPTED_DRAWS.set(key, [...state]);
}

/** Whether a level's accepted draw is remembered (its reset then costs one draw). */
export function acceptedDrawKnown(key: string): boolean {
  return ACCEPTED_DRAWS.has(key);
}

/** Forgets every remembered level (tests compare a replayed level with one drawn from its seed). */
export function forgetAcceptedDraws(): void {
  ACCEPTED_DRAWS.clear();
}

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
  /** The generator state the last level draw started from (`NumpyGenerator.saveState`): once accepted, the level's. */
  readonly acceptedState: number[] = new Array<number>(10).fill(0);
  private drawsMade = 0;
  private maxDraws = Number.POSITIVE_INFINITY;

  constructor(task: BabyAITask, numDistractors: number) {
    super(ROOM_SIZE, 1, task === "open" ? 2 : 1);
    this.task = task;
    this.numDistractors = numDistractors;
  }

  /** `RoomGridLevel.reset(seed)`: regenerates the level and the verifier; sets `max_steps`. */
  reset(seed: number | bigint | readonly number[]): void {
    this.drawLevel(seed, Number.POSITIVE_INFINITY);
  }

  /**
   * `reset(seed)`, giving up after `maxDraws` level draws (false: the level is unusable). A level remembered
   * in ACCEPTED_DRAWS is drawn once, from the generator state its accepted draw started from.
   */
  drawLevel(seed: number | bigint | readonly number[], maxDraws: number): boolean {
    const key = levelKey(this.task, this.numDistractors, seed);
    const known = ACCEPTED_DRAWS.get(key);
    this.random = new NumpyGenerator(seed);
    this.agentX = -1;
    this.agentY = -1;
    this.agentDir = -1;
    this.drawsMade = 0;
    this.maxDraws = known ? 1 : maxDraws;
    try {
      if (known) {
        // Each draw starts by redrawing the rooms, so the state it starts from decides it; the rooms are built first.
        this.generateRooms();
        this.random.restoreState(known);
        this.generateMission();
        if (!this.instructionValid(this.instruction)) throw new Error("a remembered babyai level was not accepted again");
      } else {
        for (;;) {
          try {
            this.generateRooms();
            this.generateMission();
            if (this.instructionValid(this.instruction)) break;
          } catch (error) {
            if (!(error instanceof LevelRejectedError)) throw error;
          }
        }
        if (this.drawsMade >= REMEMBERED_AFTER) rememberAcceptedDraw(key, this.acceptedState);
      }
    } catch (error) {
      if (error !== OUT_OF_DRAWS && !known) throw error;
      if (!known) return false;
      // Cannot happen (a draw depends on the generator state only): drawn from the seed rather than trusted.
      ACCEPTED_DRAWS.delete(key);
      return this.drawLevel(seed, maxDraws);
    }
    this.carrying = null;
    this.stepCount = 0;
    this.lastReward = 0;
    this.terminated = false;
    this.truncated = false;
    this.instruction.resetVerifier(this);
    // The verifier has just matched the objects on this grid: the mission text reuses those matches.
    this.mission = this.instruction.surface(this, false);
    this.maxSteps = navigationsNeeded(this.instruction) * ROOM_SIZE * ROOM_SIZE * this.numRows * this.numCols;
    return true;
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

  /** Counts a level draw against `maxDraws` and keeps the generator state it starts from. */
  private startDraw(): void {
    if (++this.drawsMade > this.maxDraws) throw OUT_OF_DRAWS;
    this.random.saveState(this.acceptedState);
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

  /**
   * The fork's `gen_mission`: draws the level until every object is reachable and the mission is not
   * excluded. The draws are the reference's, in its order; the instruction objects are built once, for
   * the accepted draw (the reference builds one per draw, which only the exclusion check reads).
   */
  private generateMission(): void {
    if (this.task === "open") {
      this.generateOpenMission();
      return;
    }
    // goto and pickup name one object, putnext and the sequence two: one or two objects beyond the distractors.
    const single = this.task === "goto" || this.task === "pickup";
    // The reference checks reachability before drawing the mission; the check draws nothing, so it runs
    // last and only for a mission that is not excluded (about a third of putnext's draws are).
    for (;;) {
      this.startDraw();
      this.regenerateRooms();
      this.placeAgent();
      const objects = this.addDistractors(null, null, this.numDistractors + (single ? 1 : 2));
      const first = this.randomElement(objects);
      const second = single ? null : this.drawSecond(first, objects);
      const order = this.task === "pick_up_seq_go_to" ? this.randomElement(BEFORE_OR_AFTER) : "Before";
      if (excluded(first.color, first.type) || (second !== null && excluded(second.color, second.type))) continue;
      if (!this.objectsReachable()) continue;
      this.instruction = this.objectInstruction(first, second, order);
      return;
    }
  }

  /** The instruction about the drawn object(s), for every task but `open`. */
  private objectInstruction(first: WorldObject, second: WorldObject | null, order: (typeof BEFORE_OR_AFTER)[number]): Instruction {
    const firstDescription = new ObjectDescription(first.type, first.color);
    if (this.task === "goto") return new GoToInstruction(firstDescription);
    if (this.task === "pickup") return new PickupInstruction(firstDescription);
    const secondDescription = new ObjectDescription((second as WorldObject).type, (second as WorldObject).color);
    if (this.task === "putnext") return new PutNextInstruction(firstDescription, secondDescription);
    const pickup = new PickupInstruction(firstDescription);
    const goTo = new GoToInstruction(secondDescription);
    return order === "Before" ? new BeforeInstruction(pickup, goTo) : new AfterInstruction(goTo, pickup);
  }

  /** The `open` branch: a locked room, distractors outside it, the agent outside it, "open the door". */
  private generateOpenMission(): void {
    for (;;) {
      this.startDraw();
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
      const colorInInstruction = this.randomElement([null, doorColor]);
      if (excluded(colorInInstruction, "door") || !this.objectsReachable()) continue;
      this.instruction = new OpenInstruction(new ObjectDescription("door", colorInInstruction));
      return;
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

  /**
   * `validate_instrs`: only PutNext can be rejected here (overlap, already adjacent, itself). A rejection
   * makes `reset` draw the level again; it is returned rather than thrown because it is routine.
   */
  private instructionValid(instruction: Instruction): boolean {
    if (instruction.kind === "before" || instruction.kind === "after") {
      return this.instructionValid(instruction.a) && this.instructionValid(instruction.b);
    }
    if (instruction.kind !== "putnext") return true;
    instruction.resetVerifier(this);
    const moveSet = instruction.move.objectSet;
    const fixedSet = instruction.fixed.objectSet;
    // "there are objects that match both lhs and rhs of PutNext"
    for (const object of moveSet) if (fixedSet.includes(object)) return false;
    // "objs already next to each other"
    if (instruction.objectsNext()) return false;
    // "cannot move an object next to itself"
    return !(moveSet.length === 1 && fixedSet.length === 1 && moveSet[0] === fixedSet[0]);
  }
}

/** Whether a description of this colour (null: any) and type puts an excluded pair in the mission. */
function excluded(color: Color | null, type: ObjectType): boolean {
  // A loop, not .some(callback): run through tsx, each callback created also calls a naming helper.
  for (const [excludedColor, excludedType] of EXCLUDED_PAIRS) if (excludedColor === color && excludedType === type) return true;
  return false;
}
