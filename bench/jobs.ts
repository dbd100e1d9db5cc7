/**
 * Job throughput: how fast the gateway takes background work in, and how fast its workers complete
 * it (docs/jobs.md) — background responses, and video jobs (docs/video.md). A batch of submissions
 * is sent by a few concurrent clients as fast as they are answered; the run then waits until the
 * gateway's own counter of ended jobs of the kind (`gateway_jobs_ended_total`, read alone from
 * /metrics, so that polling does not make the gateway count its backlog) has counted the whole
 * batch, and finally polls each job twice (the first round checks how each ended). The gateway's
 * CPU over the whole batch, per job, is the cost of a job from its submission to its end; the CPU
 * of the second round of polls, per poll, is what a client's poll of an ended job costs.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { cpuSeconds } from './processes.ts';
import { endedJobs } from './gateway.ts';

export interface JobsResult {
  readonly jobs: number;
  readonly submitters: number;
  /** Jobs accepted per second while submitting (each answered with its queued object). */
  readonly submittedPerSecond: number;
  /** Jobs ended per second, from the first submission to the last job's end. */
  readonly completedPerSecond: number;
  readonly submitSeconds: number;
  readonly totalSeconds: number;
  /** Jobs whose final status was not the completed one (none expected). */
  readonly notCompleted: number;
  /** The gateway's CPU (user + system) from the first submission to the last end, per job, µs. */
  readonly cpuMicrosPerJob: number | null;
  /** The gateway's CPU of one poll of an ended job, µs. */
  readonly cpuMicrosPerPoll: number | null;
}

/** What is submitted and polled: the background responses' routes, or the videos'. */
export interface JobRoutes {
  /** `kind` of `gateway_jobs_ended_total`. */
  readonly kind: 'response' | 'video';
  readonly submitPath: string;
  readonly pollPath: (id: string) => string;
  /** The status of a submission's answer, and of a job that completed. */
  readonly queued: string;
  readonly completed: string;
}

export const RESPONSE_JOB_ROUTES: JobRoutes = {
  kind: 'response',
  submitPath: '/v1/responses',
  pollPath: (id) => `/v1/responses/${id}`,
  queued: 'queued',
  completed: 'completed',
};

export const VIDEO_JOB_ROUTES: JobRoutes = {
  kind: 'video',
  submitPath: '/v1/videos/generations',
  pollPath: (id) => `/v1/videos/generations/${id}`,
  queued: 'processing',
  completed: 'completed',
};

export interface JobsOptions {
  readonly jobs: number;
  readonly submitters: number;
  readonly timeoutMs: number;
}

export async function measureJobs(
  gateway: { readonly origin: string; readonly apiKey: string; readonly pid?: number },
  routes: JobRoutes,
  body: (index: number) => string,
  options: JobsOptions,
): Promise<JobsResult> {
  const headers = { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' };
  const endedSoFar = () => endedJobs(gateway.origin, routes.kind);
  const cpu = () => {
    const used = gateway.pid === undefined ? null : cpuSeconds(gateway.pid);
    return used === null ? null : used.user + used.system;
  };
  const endedBefore = await endedSoFar();
  const deadline = Date.now() + options.timeoutMs;

  const ids: string[] = [];
  let next = 0;
  const cpuAtStart = cpu();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.submitters }, async () => {
      while (next < options.jobs) {
        const index = next++;
        const response = await fetch(`${gateway.origin}${routes.submitPath}`, { method: 'POST', headers, body: body(index) });
        const queued = (await response.json()) as { id?: string; status?: string };
        if (response.status !== 200 || queued.status !== routes.queued || queued.id === undefined) {
          throw new Error(`a ${routes.kind} submission answered ${response.status}: ${JSON.stringify(queued).slice(0, 200)}`);
        }
        ids.push(queued.id);
      }
    }),
  );
  const submitted = performance.now();

  while ((await endedSoFar()) - endedBefore < options.jobs) {
    if (Date.now() > deadline) throw new Error(`the ${routes.kind} jobs did not all end within ${options.timeoutMs / 1000} s`);
    await sleep(20);
  }
  const ended = performance.now();
  const cpuAtEnd = cpu();

  let notCompleted = 0;
  for (const id of ids) {
    const response = await fetch(`${gateway.origin}${routes.pollPath(id)}`, { headers });
    if (((await response.json()) as { status?: string }).status !== routes.completed) notCompleted++;
  }
  // A second round of polls, the route warm by now, is what a poll costs.
  const cpuBeforePolls = cpu();
  for (const id of ids) await (await fetch(`${gateway.origin}${routes.pollPath(id)}`, { headers })).arrayBuffer();
  const cpuAfterPolls = cpu();
  const submitSeconds = (submitted - started) / 1000;
  const totalSeconds = (ended - started) / 1000;
  const perItem = (from: number | null, to: number | null) => (from === null || to === null ? null : ((to - from) * 1e6) / options.jobs);
  return {
    jobs: options.jobs,
    submitters: options.submitters,
    submittedPerSecond: options.jobs / submitSeconds,
    completedPerSecond: options.jobs / totalSeconds,
    submitSeconds,
    totalSeconds,
    notCompleted,
    cpuMicrosPerJob: perItem(cpuAtStart, cpuAtEnd),
    cpuMicrosPerPoll: perItem(cpuBeforePolls, cpuAfterPolls),
  };
}
