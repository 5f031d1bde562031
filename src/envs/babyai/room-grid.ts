import { COLOR_NAMES, DIRECTION_X, DIRECTION_Y, TYPE_INDEX, type Color, type ObjectType } from "./constants.ts";
import { Grid, WorldObject } from "./grid.ts";
import { MiniGridWorld, rejectLevel } from "./world.ts";

/** One room of a `RoomGrid` (`minigrid/core/roomgrid.py`). Sides are ordered right, down, left, up. */
export class Room {
  readonly topX: number;
  readonly topY: number;
  readonly size: number;
  doors: Array<WorldObject | null> = [null, null, null, null];
  doorPositions: Array<[number, number] | null> = [null, null, null, null];
  neighbors: Array<Room | null> = [null, null, null, null];
  locked = false;
  objects: WorldObject[] = [];

  constructor(topX: number, topY: number, size: number) {
    this.topX = topX;
    this.topY = topY;
    this.size = size;
  }

  /** Empties the room in place (a level draws its rooms several times per reset; no new arrays). */
  reset(): void {
    this.doors.fill(null);
    this.doorPositions.fill(null);
    this.neighbors.fill(null);
    this.locked = false;
    this.objects.length = 0;
  }
}

const OBJECT_KINDS = ["key", "ball", "box"] as const;

// Imported constants read on every object placement or reachability step, copied into this module
// once: run through tsx, each use of an imported binding is a getter call (it showed as ~6% of a reset).
const COLORS: readonly Color[] = COLOR_NAMES;
const STEP_X: readonly number[] = DIRECTION_X;
const STEP_Y: readonly number[] = DIRECTION_Y;
const WALL_TYPE = TYPE_INDEX.wall;
const DOOR_TYPE = TYPE_INDEX.door;

/** `reject_next_to`: rejects cells within Manhattan distance 1 of the agent. */
export function rejectNextTo(world: MiniGridWorld, x: number, y: number): boolean {
  return Math.abs(world.agentX - x) + Math.abs(world.agentY - y) < 2;
}

/** Scratch of `objectsReachable` (called on every level draw): reused rather than allocated per call. */
let reachedScratch = new Uint8Array(0);
let stackScratch = new Int32Array(0);

/** `RoomGrid`: rooms of `roomSize` cells sharing walls, with the same random draws as the reference. */

export class RoomGridWorld extends MiniGridWorld {
  readonly roomSize: number;
  numRows: number;
  numCols: number;
  rooms: Room[][] = [];
  private emptyLayout: ReadonlyArray<WorldObject | null> | null = null;

  constructor(roomSize: number, numRows: number, numCols: number) {
    super((roomSize - 1) * numCols + 1, (roomSize - 1) * numRows + 1);
    this.roomSize = roomSize;
    this.numRows = numRows;
    this.numCols = numCols;
  }

  getRoom(i: number, j: number): Room {
    return (this.rooms[j] as Room[])[i] as Room;
  }

  roomFromPosition(x: number, y: number): Room {
    return this.getRoom(Math.floor(x / (this.roomSize - 1)), Math.floor(y / (this.roomSize - 1)));
  }

  /**
   * `RoomGrid._gen_grid`: a fresh grid and rooms, door positions drawn, agent at the centre facing right.
   * Once built, the rooms are emptied in place instead: the same state and draws without new objects.
   */
  generateRooms(): void {
    if (this.rooms.length === this.numRows) {
      this.regenerateRooms();
      return;
    }
    this.grid = new Grid(this.width, this.height);
    this.rooms = [];
    for (let j = 0; j < this.numRows; j++) {
      const row: Room[] = [];
      for (let i = 0; i < this.numCols; i++) {
        const room = new Room(i * (this.roomSize - 1), j * (this.roomSize - 1), this.roomSize);
        row.push(room);
        this.grid.wallRect(room.topX, room.topY, room.size, room.size);
      }
      this.rooms.push(row);
    }
    this.drawDoorPositions();
  }

  /** The fork's `_regen_grid`: clears the grid, resets the rooms in place and redraws door positions. */
  regenerateRooms(): void {
    // Cleared grid plus room walls is always the same layout: copied rather than drawn cell by cell.
    const cells = this.grid.cells;
    const layout = this.wallLayout();
    for (let index = 0; index < cells.length; index++) cells[index] = layout[index] as WorldObject | null;
    for (let j = 0; j < this.numRows; j++) {
      for (let i = 0; i < this.numCols; i++) this.getRoom(i, j).reset();
    }
    this.drawDoorPositions();
  }

  /** The grid of the empty rooms (walls only), drawn once. */
  private wallLayout(): ReadonlyArray<WorldObject | null> {
    if (this.emptyLayout === null) {
      const grid = new Grid(this.width, this.height);
      for (const row of this.rooms) for (const room of row) grid.wallRect(room.topX, room.topY, room.size, room.size);
      this.emptyLayout = grid.cells;
    }
    return this.emptyLayout;
  }

  private drawDoorPositions(): void {
    for (let j = 0; j < this.numRows; j++) {
      for (let i = 0; i < this.numCols; i++) {
        const room = this.getRoom(i, j);
        const lowX = room.topX + 1;
        const lowY = room.topY + 1;
        const highX = room.topX + room.size - 1;
        const highY = room.topY + room.size - 1;
        if (i < this.numCols - 1) {
          room.neighbors[0] = this.getRoom(i + 1, j);
          room.doorPositions[0] = [highX, this.randomInteger(lowY, highY)];
        }
        if (j < this.numRows - 1) {
          room.neighbors[1] = this.getRoom(i, j + 1);
          room.doorPositions[1] = [this.randomInteger(lowX, highX), highY];
        }
        if (i > 0) {
          room.neighbors[2] = this.getRoom(i - 1, j);
          room.doorPositions[2] = (room.neighbors[2] as Room).doorPositions[0] as [number, number];
        }
        if (j > 0) {
          room.neighbors[3] = this.getRoom(i, j - 1);
          room.doorPositions[3] = (room.neighbors[3] as Room).doorPositions[1] as [number, number];
        }
      }
    }
    this.agentX = Math.floor(this.numCols / 2) * (this.roomSize - 1) + Math.floor(this.roomSize / 2);
    this.agentY = Math.floor(this.numRows / 2) * (this.roomSize - 1) + Math.floor(this.roomSize / 2);
    this.agentDir = 0;
  }

  /** `RoomGrid.place_agent`: a random room, then a cell whose front is empty or a wall. */
  placeAgent(): void {
    const i = this.randomInteger(0, this.numCols);
    const j = this.randomInteger(0, this.numRows);
    const room = this.getRoom(i, j);
    for (;;) {
      this.placeAgentIn(room.topX, room.topY, room.size, room.size, 1000);
      const front = this.grid.get(this.agentX + (STEP_X[this.agentDir] as number), this.agentY + (STEP_Y[this.agentDir] as number));
      if (front === null || front.type === "wall") return;
    }
  }

  /** `add_object` + `place_in_room`: kind then colour drawn when not given; never next to the agent. */
  addObject(i: number, j: number, kind: ObjectType | null, color: Color | null): WorldObject {
    const chosenKind = kind ?? this.randomElement(OBJECT_KINDS);
    const chosenColor = color ?? this.randomElement(COLORS);
    const object = new WorldObject(chosenKind, chosenColor);
    const room = this.getRoom(i, j);
    this.placeObject(object, room.topX, room.topY, room.size, room.size, rejectNextTo, 1000);
    room.objects.push(object);
    return object;
  }

  /** `add_door` with the side, colour and lock given (the only form this level uses). */
  addDoor(i: number, j: number, side: number, color: Color, locked: boolean): WorldObject {
    const room = this.getRoom(i, j);
    if (room.doors[side]) rejectLevel("door already exists");
    room.locked = locked;
    const door = new WorldObject("door", color, { locked });
    const [x, y] = room.doorPositions[side] as [number, number];
    this.grid.set(x, y, door);
    door.currentX = x;
    door.currentY = y;
    room.doors[side] = door;
    (room.neighbors[side] as Room).doors[(side + 2) % 4] = door;
    return door;
  }

  /** `connect_all`: adds unlocked doors until every room is reachable from the agent's room. */
  connectAll(): void {
    const start = this.roomFromPosition(this.agentX, this.agentY);
    const total = this.numRows * this.numCols;
    for (let iteration = 0; ; iteration++) {
      if (iteration > 5000) rejectLevel("connect_all failed");
      // A level has one or two rooms, so a plain array is the cheapest visited set.
      const reached: Room[] = [];
      const stack = [start];
      while (stack.length > 0) {
        const room = stack.pop() as Room;
        if (reached.includes(room)) continue;
        reached.push(room);
        for (let side = 0; side < 4; side++) if (room.doors[side]) stack.push(room.neighbors[side] as Room);
      }
      if (reached.length === total) return;
      const i = this.randomInteger(0, this.numCols);
      const j = this.randomInteger(0, this.numRows);
      const side = this.randomInteger(0, 4);
      const room = this.getRoom(i, j);
      if (!room.doorPositions[side] || room.doors[side]) continue;
      if (room.locked || (room.neighbors[side] as Room).locked) continue;
      this.addDoor(i, j, side, this.randomElement(COLORS), false);
    }
  }

  /** `add_distractors(i, j, n, all_unique=False)`: colour, then kind, then the room when not given. */
  addDistractors(i: number | null, j: number | null, count: number): WorldObject[] {
    const added: WorldObject[] = [];
    while (added.length < count) {
      const color = this.randomElement(COLORS);
      const kind = this.randomElement(OBJECT_KINDS);
      const roomI = i ?? this.randomInteger(0, this.numCols);
      const roomJ = j ?? this.randomInteger(0, this.numRows);
      added.push(this.addObject(roomI, roomJ, kind, color));
    }
    return added;
  }

  /**
   * `check_objs_reachable(raise_exc=False)`: every non-wall object reachable; doors (even locked) are
   * crossed. A flood fill from the agent over empty cells and doors; any other object is reached but not
   * crossed. It runs on every level draw (three or four per reset at 8 distractors), so it works on flat
   * indices with a typed stack. The fill never leaves the grid: a RoomGrid is enclosed by walls, and only
   * empty cells and doors inside it are expanded.
   */
  objectsReachable(): boolean {
    const { width, height } = this;
    const cells = this.grid.cells;
    const size = width * height;
    if (reachedScratch.length < size) {
      reachedScratch = new Uint8Array(size);
      stackScratch = new Int32Array(size);
    }
    const reached = reachedScratch;
    const stack = stackScratch;
    reached.fill(0, 0, size);
    const start = this.agentY * width + this.agentX;
    reached[start] = 1;
    let top = 0;
    if (crossable(cells[start] as WorldObject | null)) stack[top++] = start;
    while (top > 0) {
      const index = stack[--top] as number;
      top = reach(cells, reached, stack, top, index + 1);
      top = reach(cells, reached, stack, top, index + width);
      top = reach(cells, reached, stack, top, index - 1);
      top = reach(cells, reached, stack, top, index - width);
    }
    for (let index = 0; index < size; index++) {
      const cell = cells[index];
      if (cell && cell.typeIndex !== WALL_TYPE && !reached[index]) return false;
    }
    return true;
  }
}

/** One step of the reachability fill: marks cell `next` reached and stacks it when crossable; returns the stack size. */
function reach(cells: ReadonlyArray<WorldObject | null>, reached: Uint8Array, stack: Int32Array, top: number, next: number): number {
  if (reached[next]) return top;
  reached[next] = 1;
  if (crossable(cells[next] as WorldObject | null)) stack[top++] = next;
  return top;
}

/** An empty cell or a door (open, closed or locked): what the reachability fill walks through. */
function crossable(cell: WorldObject | null): boolean {
  return cell === null || cell.typeIndex === DOOR_TYPE;
}
