/**
 * Long operations beside short work, on one gateway with the default job slots (docs/jobs.md,
 * "Scheduling"): thousands of video generations of a real minute each are in flight while
 * background responses are served, and one account's backlog does not hold back another's response.
 *
 * On a gateway of its own (a fresh embedded store):
 * 1. background responses of an instant upstream, alone (after as many to warm up): each one's
 *    time from queued to completed, the batch submitted by 8 concurrent clients;
 * 2. `videos` generations of a minute each submitted by a first account; once all are started, a
 *    window with nothing else running gives the gateway's CPU per claim of a video step (a start or
 *    one look at the operation) and its resident memory;
 * 3. the same background responses, by a second account, with the videos in flight;
 * 4. the first account queues `backlog` background responses of 500 ms each; the second account's
 *    next response, submitted right after, is timed from queued to completed;
 * 5. every video is waited for (each must complete).
 * The times from queued to completed are read from the store's job rows (created and last updated,
 * in milliseconds) after each phase, so that measuring them costs the gateway nothing.
 */
import { DatabaseSync } from 'node:sqlite';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { endedJobs, readMetrics, sumOfSeries, type RunningGateway } from './gateway.ts';
import { cpuSeconds, MemoryWatch } from './processes.ts';
import { percentile } from './stats.ts';

export interface LongOperationsOptions {
  readonly videos: number;
  readonly backlog: number;
  /** Background responses of each latency sample. */
  readonly responses: number;
  /** The window of step CPU, with only the videos in flight. */
  readonly windowSeconds: number;
  readonly timeoutMs: number;
}

export interface LatencySample {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface LongOperationsResult {
  readonly videos: number;
  readonly videoSeconds: number;
  readonly jobConcurrency: string;
  readonly submitSeconds: number;
  /** Background responses from queued to completed, without and with the videos in flight. */
  readonly responsesAlone: LatencySample;
  readonly responsesWithVideos: LatencySample;
  readonly backlog: number;
  /** The second account's response, queued right after the first account's backlog. */
  readonly otherAccountMs: number;
  /** How long the first account's backlog took to drain. */
  readonly backlogSeconds: number;
  /** Claims of video steps in the quiet window, and the gateway's CPU per claim. */
  readonly windowSteps: number;
  readonly cpuMicrosPerStep: number | null;
  readonly rssBytesWithVideos: number | null;
  readonly peakRssBytes: number | null;
  /** From the first video's submission to the last one's end. */
  readonly videosEndedSeconds: number;
  readonly videosNotCompleted: number;
}

const CHAT = 'gateway/bench-chat';
const SLOW_CHAT = 'gateway/bench-chat-slow';
const LONG_VIDEO = 'gateway/bench-video-long';
const VIDEO_SECONDS = 60;

export async function measureLongOperations(
  gateway: RunningGateway,
  options: LongOperationsOptions,
  progress: (line: string) => void,
): Promise<LongOperationsResult> {
  if (gateway.dataDir === null) throw new Error('the long-operations run reads the embedded store');
  const deadline = Date.now() + options.timeoutMs;
  const pid = gateway.child.pid;
  const memory = new MemoryWatch(pid);
  const jobsFile = new DatabaseSync(join(gateway.dataDir, 'gateway.sqlite'), { readOnly: true });
  const other = await gateway.newAccount('bench-other');
  try {
    const client = (apiKey: string) => ({ origin: gateway.origin, apiKey });
    const first = client(gateway.apiKey);
    const second = client(other.apiKey);
    const metrics = new MetricsReader(gateway.origin);
    const timed = (ids: readonly string[]) => queuedToCompleted(jobsFile, ids);
    const ended = async (kind: 'response' | 'video', count: number, what: string) => {
      while ((await metrics.endedJobs(kind)) < count) {
        if (Date.now() > deadline) throw new Error(`${what} did not end in time`);
        await sleep(50);
      }
    };

    progress(`long operations: ${options.responses} background responses to warm up, then ${options.responses} alone`);
    let responsesEnded = await metrics.endedJobs('response');
    await submitAll(second, '/v1/responses', options.responses, 8, (index) => backgroundBody(CHAT, `warm-up ${index}`));
    responsesEnded += options.responses;
    await ended('response', responsesEnded, 'the warm-up responses');
    const alone = await submitAll(second, '/v1/responses', options.responses, 8, (index) => backgroundBody(CHAT, `alone ${index}`));
    responsesEnded += options.responses;
    await ended('response', responsesEnded, 'the background responses');
    const responsesAlone = sample(timed(alone));

    progress(`long operations: ${options.videos} video generations of ${VIDEO_SECONDS} s`);
    const videosStarted = performance.now();
    await submitAll(first, '/v1/videos/generations', options.videos, 16, (index) =>
      JSON.stringify({ model: LONG_VIDEO, prompt: `Long video ${index}: a glacier calving.`, duration: 4 }),
    );
    const submitSeconds = (performance.now() - videosStarted) / 1000;
    while ((await metrics.videosUnderWay()) < options.videos) {
      if (Date.now() > deadline) throw new Error('the videos were not all started in time');
      await sleep(100);
    }
    const stepsBefore = await metrics.videoClaims();
    const cpuBefore = cpuTotal(pid);
    await sleep(options.windowSeconds * 1000);
    const windowSteps = (await metrics.videoClaims()) - stepsBefore;
    const cpuAfter = cpuTotal(pid);
    const rssBytesWithVideos = memory.now();
    const cpuMicrosPerStep = cpuBefore === null || cpuAfter === null || windowSteps === 0 ? null : ((cpuAfter - cpuBefore) * 1e6) / windowSteps;
    progress(`long operations: ${windowSteps} steps in ${options.windowSeconds} s, ${Math.round(cpuMicrosPerStep ?? Number.NaN)} µs CPU each`);

    progress(`long operations: ${options.responses} background responses with the videos in flight`);
    const loaded = await submitAll(second, '/v1/responses', options.responses, 8, (index) => backgroundBody(CHAT, `loaded ${index}`));
    responsesEnded += options.responses;
    await ended('response', responsesEnded, 'the background responses beside the videos');
    const responsesWithVideos = sample(timed(loaded));

    progress(`long operations: a backlog of ${options.backlog} responses of 500 ms, then another account's response`);
    const backlogStarted = performance.now();
    await submitAll(first, '/v1/responses', options.backlog, 16, (index) => backgroundBody(SLOW_CHAT, `backlog ${index}`));
    const [otherId] = await submitAll(second, '/v1/responses', 1, 1, () => backgroundBody(CHAT, 'right after the backlog'));
    responsesEnded += options.backlog + 1;
    await ended('response', responsesEnded, 'the backlog');
    const backlogSeconds = (performance.now() - backlogStarted) / 1000;
    const [otherAccountMs] = timed([otherId]);

    progress('long operations: waiting for every video');
    await ended('video', options.videos, 'the videos');
    const videosEndedSeconds = (performance.now() - videosStarted) / 1000;
    const completed = jobsFile.prepare(`SELECT COUNT(*) AS n FROM jobs WHERE kind = 'video' AND status = 'completed'`).get() as { n: number | bigint };
    return {
      videos: options.videos,
      videoSeconds: VIDEO_SECONDS,
      jobConcurrency: 'default slots: 16 for background responses, 16 for steps of operations',
      submitSeconds,
      responsesAlone,
      responsesWithVideos,
      backlog: options.backlog,
      otherAccountMs,
      backlogSeconds,
      windowSteps,
      cpuMicrosPerStep,
      rssBytesWithVideos,
      peakRssBytes: memory.stop(),
      videosEndedSeconds,
      videosNotCompleted: options.videos - Number(completed.n),
    };
  } finally {
    jobsFile.close();
    memory.stop();
  }
}

function backgroundBody(model: string, text: string): string {
  return JSON.stringify({ model, input: `${text}: say hello.`, max_output_tokens: 64, background: true });
}

/** Submits `count` jobs with `submitters` concurrent clients; their ids in submission order. */
async function submitAll(
  client: { readonly origin: string; readonly apiKey: string },
  path: string,
  count: number,
  submitters: number,
  body: (index: number) => string,
): Promise<string[]> {
  const headers = { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' };
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(submitters, count) }, async () => {
      while (next < count) {
        const index = next++;
        const response = await fetch(`${client.origin}${path}`, { method: 'POST', headers, body: body(index) });
        const job = (await response.json()) as { id?: string };
        if (response.status !== 200 || job.id === undefined) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(job).slice(0, 200)}`);
        ids[index] = job.id;
      }
    }),
  );
  return ids;
}

/** Each job's time from queued (its row created) to completed (its row's last update), ms. */
function queuedToCompleted(file: DatabaseSync, ids: readonly string[]): number[] {
  const read = file.prepare(`SELECT status, updated_at - created_at AS ms FROM jobs WHERE id = ?`);
  return ids.map((id) => {
    const row = read.get(id) as { status: string; ms: number } | undefined;
    if (row?.status !== 'completed') throw new Error(`job ${id} ended ${row?.status ?? 'missing'}, not completed`);
    return Number(row.ms);
  });
}

function sample(values: readonly number[]): LatencySample {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50Ms: Math.round(percentile(sorted, 50)), p99Ms: Math.round(percentile(sorted, 99)) };
}

function cpuTotal(pid: number): number | null {
  const used = cpuSeconds(pid);
  return used === null ? null : used.user + used.system;
}

/** The job counters of the gateway's /metrics. */
class MetricsReader {
  readonly #origin: string;
  constructor(origin: string) {
    this.#origin = origin;
  }
  endedJobs(kind: string): Promise<number> {
    return endedJobs(this.#origin, kind);
  }
  /** Started: parked between two looks, or in a step. */
  async videosUnderWay(): Promise<number> {
    return sumOfSeries(
      await readMetrics(this.#origin, ['gateway_jobs_parked', 'gateway_jobs_running']),
      /^gateway_jobs_(?:parked|running)\{kind="video"\} (\d+)$/gm,
    );
  }
  async videoClaims(): Promise<number> {
    return sumOfSeries(await readMetrics(this.#origin, ['gateway_jobs_claimed_total']), /^gateway_jobs_claimed_total\{kind="video"\} (\d+)$/gm);
  }
}
