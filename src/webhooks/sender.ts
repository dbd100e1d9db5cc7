/**
 * One delivery attempt over HTTP: the stored body, signed with the endpoint's secret by the
 * `standardwebhooks` library (https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md),
 * POSTed through an agent whose connections can only reach addresses the policy allows
 * (addresses.ts). Redirects are not followed (undici's `request` never does): a 3xx is a failed
 * attempt like any other non-2xx answer, and cannot lead the gateway to another host.
 */
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import type { ClaimedWebhookDelivery } from '../storage/store.ts';
import { checkedLookup, refusedLiteral, type Resolver } from './addresses.ts';

export const WEBHOOK_USER_AGENT = 'gateway-webhooks/1';

/** An answered 2xx, or why the attempt failed (with the status when there was one). */
export type AttemptResult = { readonly ok: true; readonly status: number } | { readonly ok: false; readonly status: number | null; readonly error: string };

export interface WebhookSender {
  /** Never throws: every failure is a result. `stop` aborts the attempt (the instance is stopping). */
  send(delivery: ClaimedWebhookDelivery, stop: AbortSignal): Promise<AttemptResult>;
  close(): Promise<void>;
}

export interface WebhookSenderOptions {
  readonly allowPrivateAddresses: boolean;
  /** Bounds the whole attempt: connection, request, answer. */
  readonly timeoutMs: number;
  /** The clock of the `webhook-timestamp` header and the signature. */
  readonly now: () => number;
  /** Replaces DNS (tests). */
  readonly resolve?: Resolver;
}

/** How much of an endpoint's answer body is read (and dropped) before the connection is given up. */
const ANSWER_LIMIT_BYTES = 64 * 1024;
/** Stored error texts are cut to this length. */
const MAX_ERROR_CHARS = 500;

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const agent = new Agent({
    connect: { timeout: options.timeoutMs, ...(options.allowPrivateAddresses ? {} : { lookup: checkedLookup(options.resolve) }) },
    keepAliveTimeout: 30_000,
  });
  return {
    async send(delivery, stop) {
      let url: URL;
      try {
        url = new URL(delivery.url);
      } catch {
        return { ok: false, status: null, error: 'the endpoint URL does not parse' };
      }
      // A host written as an address is connected to without a lookup, so it is checked here.
      const refusal = options.allowPrivateAddresses ? null : refusedLiteral(url);
      if (refusal) return { ok: false, status: null, error: refusal.message };
      const timestamp = new Date(options.now());
      const headers = {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        'webhook-id': delivery.eventId,
        'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'webhook-signature': new Webhook(delivery.secret).sign(delivery.eventId, timestamp, delivery.body),
      };
      const timeout = AbortSignal.timeout(options.timeoutMs);
      try {
        const answer = await request(url, {
          dispatcher: agent,
          method: 'POST',
          headers,
          body: delivery.body,
          signal: AbortSignal.any([stop, timeout]),
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
        await answer.body.dump({ limit: ANSWER_LIMIT_BYTES }).catch(() => undefined);
        if (answer.statusCode >= 200 && answer.statusCode < 300) return { ok: true, status: answer.statusCode };
        return { ok: false, status: answer.statusCode, error: `the endpoint answered with status ${answer.statusCode}` };
      } catch (error) {
        if (stop.aborted) return { ok: false, status: null, error: 'the gateway instance stopped during the attempt' };
        if (timeout.aborted) return { ok: false, status: null, error: `no answer within ${options.timeoutMs} ms` };
        return { ok: false, status: null, error: describe(error) };
      }
    },
    close: () => agent.close(),
  };
}

/** The first message of an error and its causes that says something, cut to size. */
function describe(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const message = current instanceof AggregateError && current.errors.length > 0 ? describe(current.errors[0]) : current.message;
    if (message) return message.slice(0, MAX_ERROR_CHARS);
    current = current.cause;
  }
  return String(error).slice(0, MAX_ERROR_CHARS);
}
