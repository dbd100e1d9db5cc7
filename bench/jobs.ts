/**
 * Background-job throughput: how fast the gateway takes background responses in, and how fast its
 * workers complete them (docs/jobs.md). A batch of `POST /v1/responses` with `background: true` is
 * submitted by a few concurrent clients as fast as they are answered; the run then waits until the
 * gateway's own counter of ended jobs (`gateway_jobs_ended_total` in /metrics, read a few times a
 * second, so that polling does not compete with the workers) has counted the whole batch, and
 * finally checks each job's status once. Jobs run against the same simulator as the other
 * workloads.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

export interface BackgroundJobsResult {
  readonly jobs: number;
  readonly submitters: number;
  /** Jobs accepted per second while submitting (each answered with its queued object). */
  readonly submittedPerSecond: number;
  /** Jobs ended per second, from the first submission to the last job's end. */
  readonly completedPerSecond: number;
  readonly submitSeconds: number;
  readonly totalSeconds: number;
  /** Jobs whose final status was not `completed` (none expected). */
  readonly notCompleted: number;
}

export interface BackgroundJobsOptions {
  readonly jobs: number;
  readonly submitters: number;
  readonly timeoutMs: number;
}

const ENDED_METRIC = /^gateway_jobs_ended_total\{kind="response",status="[a-z_]+"\} (\d+)$/gm;

export async function measureBackgroundJobs(
  gateway: { readonly origin: string; readonly apiKey: string },
  body: (index: number) => string,
  options: BackgroundJobsOptions,
): Promise<BackgroundJobsResult> {
  const headers = { authorization: `Bearer ${gateway.apiKey}`, 'content-type': 'application/json' };
  const endedSoFar = async (): Promise<number> => {
    const text = await (await fetch(`${gateway.origin}/metrics`)).text();
    return [...text.matchAll(ENDED_METRIC)].reduce((sum, match) => sum + Number(match[1]), 0);
  };
  const endedBefore = await endedSoFar();
  const deadline = Date.now() + options.timeoutMs;

  const ids: string[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.submitters }, async () => {
      while (next < options.jobs) {
        const index = next++;
        const response = await fetch(`${gateway.origin}/v1/responses`, { method: 'POST', headers, body: body(index) });
        const queued = (await response.json()) as { id?: string; status?: string };
        if (response.status !== 200 || queued.status !== 'queued' || queued.id === undefined) {
          throw new Error(`background submission answered ${response.status}: ${JSON.stringify(queued).slice(0, 200)}`);
        }
        ids.push(queued.id);
      }
    }),
  );
  const submitted = performance.now();

  while ((await endedSoFar()) - endedBefore < options.jobs) {
    if (Date.now() > deadline) throw new Error(`the background jobs did not all end within ${options.timeoutMs / 1000} s`);
    await sleep(20);
  }
  const ended = performance.now();

  let notCompleted = 0;
  for (const id of ids) {
    const response = await fetch(`${gateway.origin}/v1/responses/${id}`, { headers });
    if (((await response.json()) as { status?: string }).status !== 'completed') notCompleted++;
  }
  const submitSeconds = (submitted - started) / 1000;
  const totalSeconds = (ended - started) / 1000;
  return {
    jobs: options.jobs,
    submitters: options.submitters,
    submittedPerSecond: options.jobs / submitSeconds,
    completedPerSecond: options.jobs / totalSeconds,
    submitSeconds,
    totalSeconds,
    notCompleted,
  };
}
