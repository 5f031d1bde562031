import { TYPE_INDEX, type Color, type ObjectType } from "./constants.ts";

/** `TYPE_INDEX`, copied once: run through tsx, each use of an imported binding is a getter call. */
const TYPE_INDICES: Readonly<Record<ObjectType, number>> = TYPE_INDEX;

/**
 * A Minigrid world object (`minigrid/core/world_object.py`). Identity matters: instructions and the
 * verifiers compare objects by reference.
 */
export class WorldObject {
  readonly type: ObjectType;
  readonly typeIndex: number;
  readonly color: Color;
  isOpen = false;
  isLocked = false;
  initX = -1;
  initY = -1;
  currentX = -1;
  currentY = -1;

  constructor(type: ObjectType, color: Color, options: { locked?: boolean } = {}) {
    this.type = type;
    this.typeIndex = TYPE_INDICES[type];
    this.color = color;
    if (options.locked) this.isLocked = true;
  }

  canOverlap(): boolean {
    if (this.type === "door") return this.isOpen;
    return this.type === "goal" || this.type === "lava" || this.type === "floor";
  }

  canPickup(): boolean {
    return this.type === "key" || this.type === "ball" || this.type === "box";
  }

  seeBehind(): boolean {
    if (this.type === "wall") return false;
    if (this.type === "door") return this.isOpen;
    return true;
  }

  /** `encode()` state: doors 0 open, 2 locked, 1 closed (open checked first); others 0. */
  stateIndex(): number {
    if (this.type !== "door") return 0;
    if (this.isOpen) return 0;
    return this.isLocked ? 2 : 1;
  }
}

/** Walls never need identity, so one shared instance stands for every wall cell. */
export const WALL_OBJECT = new WorldObject("wall", "grey");

/** A flat `grid[y * width + x]` of objects or null. */
export class Grid {
  readonly width: number;
  readonly height: number;
  readonly cells: Array<WorldObject | null>;

  constructor(width: number, height: number) {
    this.width = width;
    this.height = height;
    this.cells = new Array<WorldObject | null>(width * height).fill(null);
  }

  get(x: number, y: number): WorldObject | null {
    return this.cells[y * this.width + x] as WorldObject | null;
  }

  set(x: number, y: number, value: WorldObject | null): void {
    this.cells[y * this.width + x] = value;
  }

  clear(): void {
    this.cells.fill(null);
  }

  /** `wall_rect(x, y, w, h)`: the border of a rectangle. */
  wallRect(x: number, y: number, width: number, height: number): void {
    for (let i = 0; i < width; i++) {
      this.set(x + i, y, WALL_OBJECT);
      this.set(x + i, y + height - 1, WALL_OBJECT);
    }
    for (let j = 0; j < height; j++) {
      this.set(x, y + j, WALL_OBJECT);
      this.set(x + width - 1, y + j, WALL_OBJECT);
    }
  }
}

const TYPE_LETTER: Record<ObjectType, string> = { wall: "W", floor: "F", door: "D", key: "K", ball: "A", box: "B", goal: "G", lava: "V" };
const AGENT_CODES = [">>", "VV", "<<", "^^"];

/** Minigrid's `pprint_grid`: one string per row, two characters per cell. */
export function printGrid(grid: Grid, agentX: number, agentY: number, agentDir: number): string[] {
  const rows: string[] = [];
  for (let y = 0; y < grid.height; y++) {
    let row = "";
    for (let x = 0; x < grid.width; x++) {
      if (x === agentX && y === agentY) {
        row += AGENT_CODES[agentDir];
        continue;
      }
      const cell = grid.get(x, y);
      if (cell === null) {
        row += "  ";
        continue;
      }
      const colorLetter = cell.color[0]?.toUpperCase() ?? "?";
      if (cell.type === "door") {
        if (cell.isOpen) row += "__";
        else if (cell.isLocked) row += `L${colorLetter}`;
        else row += `D${colorLetter}`;
        continue;
      }
      row += TYPE_LETTER[cell.type] + colorLetter;
    }
    rows.push(row);
  }
  return rows;
}
