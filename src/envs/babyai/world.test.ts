import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ACTION, type Color, type ObjectType } from "./constants.ts";
import { WALL_OBJECT, WorldObject } from "./grid.ts";
import { AfterInstruction, BeforeInstruction, GoToInstruction, ObjectDescription, PickupInstruction } from "./instructions.ts";
import { MixedTrainLocalLevel } from "./level.ts";
import { roundLikePython } from "./replay.ts";
import { describeObservation } from "./text.ts";
import { MiniGridWorld } from "./world.ts";

/** An 8×8 walled room with the agent at (1, 3) facing right and the given objects. */
function room(objects: Array<[number, number, WorldObject]> = []): MiniGridWorld {
  const world = new MiniGridWorld(8, 8);
  world.grid.wallRect(0, 0, 8, 8);
  world.agentX = 1;
  world.agentY = 3;
  world.agentDir = 0;
  world.maxSteps = 64;
  for (const [x, y, object] of objects) {
    world.grid.set(x, y, object);
    object.initX = object.currentX = x;
    object.initY = object.currentY = y;
  }
  return world;
}

const make = (type: ObjectType, color: Color, options: { locked?: boolean; open?: boolean } = {}) => {
  const object = new WorldObject(type, color, { locked: options.locked });
  if (options.open) object.isOpen = true;
  return object;
};

function wallColumnWith(x: number, middle: WorldObject): Array<[number, number, WorldObject]> {
  return [1, 2, 3, 4, 5, 6].map((y) => [x, y, y === 3 ? middle : WALL_OBJECT] as [number, number, WorldObject]);
}

describe("babyai observation text (gen_graph as BALROG formats it)", () => {
  it("a wall blocks the view of what lies behind it", () => {
    const text = describeObservation(room([...wallColumnWith(3, WALL_OBJECT), [5, 3, make("key", "blue")]]));
    assert.ok(text.startsWith("a wall 2 steps forward\n"), text);
    assert.ok(!text.includes("key"), text);
  });

  it("a closed door blocks the view and stops the forward wall scan", () => {
    const text = describeObservation(room([...wallColumnWith(3, make("door", "red")), [5, 3, make("key", "blue")]]));
    assert.ok(text.includes("a closed red door 2 steps forward"), text);
    assert.ok(!text.includes("key") && !text.includes("steps forward\na"), text);
  });

  it("an open door lets light through and keeps the reference's 'a open' wording", () => {
    const text = describeObservation(room([...wallColumnWith(3, make("door", "red", { open: true })), [5, 3, make("key", "blue")]]));
    assert.ok(text.includes("a open red door 2 steps forward"), text);
    assert.ok(text.includes("a blue key 4 steps forward"), text);
  });

  it("a locked door is described as locked", () => {
    const text = describeObservation(room(wallColumnWith(3, make("door", "yellow", { locked: true }))));
    assert.ok(text.includes("a locked yellow door 2 steps forward"), text);
  });

  it("objects do not occlude, but a wall behind an object gets no wall line", () => {
    const text = describeObservation(
      room([
        [3, 3, make("ball", "green")],
        [5, 3, make("key", "blue")],
      ]),
    );
    // Objects are listed left to right, far to near; the wall 4 steps right is outside the 7×7 view.
    assert.equal(text, "a wall 3 steps left\na blue key 4 steps forward\na green ball 2 steps forward");
  });

  it("says '1 step' for one and 'steps' otherwise, sideways parts first", () => {
    const text = describeObservation(
      room([
        [2, 3, make("box", "purple")],
        [2, 1, make("key", "grey")],
        [1, 4, make("ball", "red")],
      ]),
    );
    assert.ok(text.includes("a purple box 1 step forward"), text);
    assert.ok(text.includes("a grey key 2 steps left and 1 step forward"), text);
    assert.ok(text.includes("a red ball 1 step right"), text);
  });

  it("starts with what the agent carries", () => {
    const world = room();
    world.carrying = make("key", "yellow");
    assert.ok(describeObservation(world).startsWith("You carry a yellow key\n"));
  });
});

describe("babyai world dynamics", () => {
  it("toggling a box makes it vanish", () => {
    const world = room([[2, 3, make("box", "grey")]]);
    world.baseStep(ACTION.toggle);
    assert.equal(world.grid.get(2, 3), null);
  });

  it("a locked door opens only with a key of its colour", () => {
    const door = make("door", "yellow", { locked: true });
    const world = room(wallColumnWith(2, door));
    world.baseStep(ACTION.toggle);
    assert.equal(door.isLocked, true);
    world.carrying = make("key", "blue");
    world.baseStep(ACTION.toggle);
    assert.equal(door.isLocked, true);
    world.carrying = make("key", "yellow");
    world.baseStep(ACTION.toggle);
    assert.deepEqual([door.isLocked, door.isOpen], [false, true]);
    world.baseStep(ACTION.forward);
    assert.deepEqual([world.agentX, world.agentY], [2, 3]);
  });

  it("pickup and drop move objects and update positions", () => {
    const ball = make("ball", "blue");
    const world = room([[2, 3, ball]]);
    world.baseStep(ACTION.pickup);
    assert.equal(world.carrying, ball);
    assert.deepEqual([ball.currentX, ball.currentY], [-1, -1]);
    world.baseStep(ACTION.right);
    world.baseStep(ACTION.drop);
    assert.equal(world.grid.get(1, 4), ball);
    assert.deepEqual([ball.currentX, ball.currentY, ball.initX, ball.initY], [1, 4, 2, 3]);
  });

  it("computes the success reward as 1 − 0.9·steps/max_steps and truncates at max_steps", () => {
    const world = room();
    world.maxSteps = 128;
    world.stepCount = 16;
    world.baseStep(ACTION.left);
    assert.equal(roundLikePython(world.successReward()), 0.880469);
    world.stepCount = 127;
    world.baseStep(ACTION.left);
    assert.equal(world.truncated, true);
  });
});

describe("babyai instruction verifiers", () => {
  it("After(go to X, pick up X) succeeds in the pickup step through the stale GoTo position", () => {
    const key = make("key", "yellow");
    const world = room([
      [2, 3, key],
      [5, 5, make("key", "yellow")],
    ]);
    const instruction = new AfterInstruction(
      new GoToInstruction(new ObjectDescription("key", "yellow")),
      new PickupInstruction(new ObjectDescription("key", "yellow")),
    );
    instruction.resetVerifier(world);
    assert.equal(instruction.surface(world), "go to a yellow key after you pick up a yellow key");
    world.baseStep(ACTION.pickup);
    assert.equal(instruction.verify(ACTION.pickup), "success");
  });

  it("Before(pick up A, go to B) ignores B until A is done", () => {
    const ball = make("ball", "green");
    const world = room([
      [2, 3, ball],
      [1, 5, make("key", "purple")],
    ]);
    const instruction = new BeforeInstruction(
      new PickupInstruction(new ObjectDescription("key", "purple")),
      new GoToInstruction(new ObjectDescription("ball", "green")),
    );
    instruction.resetVerifier(world);
    assert.equal(instruction.surface(world), "pick up the purple key, then go to the green ball");
    world.baseStep(ACTION.left);
    world.baseStep(ACTION.right);
    assert.equal(instruction.verify(ACTION.right), "continue", "facing the ball before the pickup does not count");
    world.baseStep(ACTION.right);
    world.baseStep(ACTION.forward);
    world.baseStep(ACTION.pickup);
    assert.equal(instruction.verify(ACTION.pickup), "continue");
    world.baseStep(ACTION.left);
    world.baseStep(ACTION.forward);
    world.baseStep(ACTION.left);
    world.baseStep(ACTION.left);
    assert.equal(instruction.verify(ACTION.left), "continue");
    world.baseStep(ACTION.right);
    assert.equal(instruction.verify(ACTION.right), "success");
  });

  it("PutNext levels never name overlapping or already-adjacent objects", () => {
    for (let seed = 0; seed < 100; seed++) {
      const level = new MixedTrainLocalLevel("putnext", seed % 2 === 0 ? 0 : 8);
      level.reset(seed);
      const instruction = level.instruction;
      assert.equal(instruction.kind, "putnext");
      if (instruction.kind !== "putnext") continue;
      assert.ok(!instruction.move.objectSet.some((object) => instruction.fixed.objectSet.includes(object)));
      assert.equal(instruction.objectsNext(), false);
      assert.ok(!/yellow box|red key|green ball/.test(level.mission), level.mission);
    }
  });
});
