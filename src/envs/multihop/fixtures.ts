import { fileURLToPath } from "node:url";

/** `test/fixtures/multihop/`: the repo's copies of the reference cases (tests and the benchmark read them; the CLI never does). */
export const MULTIHOP_FIXTURES = fileURLToPath(new URL("../../../test/fixtures/multihop/", import.meta.url));
