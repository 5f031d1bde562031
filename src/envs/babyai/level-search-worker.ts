/** The worker-thread side of babyai's level search (level-search.ts): pure CPU, off the server's event loop. */
import { serveThreadJobs } from "../_kit/thread-jobs.ts";
import { searchLevel } from "./level-search.ts";

serveThreadJobs(searchLevel);
