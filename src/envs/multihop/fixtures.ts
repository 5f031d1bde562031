import { fileURLToPath } from "node:url";

/** `shared/fixtures/multihop/` beside the clone (tests and the benchmark read it; the CLI never does). */
export const SHARED_FIXTURES = fileURLToPath(new URL("../../../../shared/fixtures/multihop/", import.meta.url));
