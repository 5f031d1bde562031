/**
 * The id and code numbers taken in the world being built, as keys `group * 100000 + number` (a group
 * per id prefix and per code prefix, see `numberGroup`). An open-addressing set of a few kilobytes: it
 * stays in the CPU cache, where a table per prefix indexed by number (10 KB per id prefix, 100 KB per
 * code prefix) missed the cache on most draws, and that was a large share of building a world.
 * Cleared by stamp, so a new world costs nothing.
 */
let bits = 10;
let keys = new Int32Array(1 << bits);
let stamps = new Uint32Array(1 << bits);
let stamp = 0;
let size = 0;

const groups = new Map<string, number>();

/** The group of an id prefix ("id EMP") or a code prefix ("code PX"); numbers are unique within a group. */
export function numberGroup(name: string): number {
  let group = groups.get(name);
  if (group === undefined) groups.set(name, (group = groups.size));
  return group;
}

/** Empties the set (a new world). */
export function clearTakenNumbers(): void {
  if (++stamp === 0xffffffff) {
    stamps.fill(0);
    stamp = 1;
  }
  size = 0;
}

/** Takes `number` (0-99999) in `group`; false when it was taken already. */
export function takeNumber(group: number, number: number): boolean {
  if (size * 2 >= keys.length) grow();
  const key = group * 100000 + number;
  const mask = keys.length - 1;
  let slot = Math.imul(key, 0x9e3779b1) >>> (32 - bits);
  while (stamps[slot] === stamp) {
    if (keys[slot] === key) return false;
    slot = (slot + 1) & mask;
  }
  stamps[slot] = stamp;
  keys[slot] = key;
  size++;
  return true;
}

/** Doubles the table (a world larger than any before), keeping the keys taken. */
function grow(): void {
  const oldKeys = keys;
  const oldStamps = stamps;
  bits++;
  keys = new Int32Array(1 << bits);
  stamps = new Uint32Array(1 << bits);
  const mask = keys.length - 1;
  for (let index = 0; index < oldKeys.length; index++) {
    if (oldStamps[index] !== stamp) continue;
    const key = oldKeys[index] as number;
    let slot = Math.imul(key, 0x9e3779b1) >>> (32 - bits);
    while (stamps[slot] === stamp) slot = (slot + 1) & mask;
    stamps[slot] = stamp;
    keys[slot] = key;
  }
}
