// The environment contract (src/testing/environment-contract.ts) over every registered environment, with its default
// config and its audit: registering an environment is enough to have it checked.
import { CONTRACT_AUDIT_N, describeEnvironmentContract } from "../src/testing/environment-contract.ts";
import { listEnvironments } from "../src/envs/registry.ts";

for (const env of listEnvironments()) describeEnvironmentContract(env, { auditN: CONTRACT_AUDIT_N });
