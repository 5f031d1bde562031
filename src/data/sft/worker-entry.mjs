// Worker threads do not inherit the tsx loader registered through its API (bin/toolgym.js), so each
// worker registers it itself before loading the TypeScript worker body.
import { register } from "tsx/esm/api";

register();
await import("./worker.ts");
