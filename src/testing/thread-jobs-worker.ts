/** A ThreadJobs worker for the pool's own tests: doubles a number, after spinning the thread for a while if asked. */
import { ToolgymError } from "../core/index.ts";
import { serveThreadJobs } from "../envs/_kit/thread-jobs.ts";

serveThreadJobs((input: { value: number; spinMilliseconds?: number; fail?: string }) => {
  const until = Date.now() + (input.spinMilliseconds ?? 0);
  while (Date.now() < until) {
    // busy: a job that holds its thread, as a slow level search does
  }
  if (input.fail) throw new ToolgymError({ code: input.fail, message: `asked to fail with ${input.fail}` });
  return input.value * 2;
});
