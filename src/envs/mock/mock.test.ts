import { describeEnvironmentContract } from "../_kit/contract.ts";
import { mockEnvironment, type MockTask } from "./index.ts";

describeEnvironmentContract({ env: mockEnvironment, secrets: (task) => [(task as MockTask).answer], auditN: 30 });
