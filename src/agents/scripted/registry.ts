/** Scripted policies live on their environment's definition; this is where agents code looks them up. */
export { getPolicies, getPolicy } from "../../envs/registry.ts";
