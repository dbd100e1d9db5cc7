/**
 * How a request's page shows what the request log kept: its upstream attempts as a waterfall, its
 * cost as the catalog prices it, and its stored output (text apart from reasoning and tool calls,
 * images inline, a video in a player). Bars are SVG attributes, not inline styles: the page's
 * Content-Security-Policy allows no inline style.
 */
import { totalInputTokens, type Usage } from '../canonical/index.ts';
import { referenceCost, tierFor } from '../billing/cost.ts';
import type { RouteEndpoint } from '../catalog/types.ts';
import { applyRate, formatRateMultiplier, formatUsd, type Picos, type RateMultiplier } from '../core/money.ts';
import type { RequestLogRecord, UpstreamAttempt } from '../storage/store.ts';
import { html, type Html } from './html.ts';

/** The API each route name speaks. */
export const DIALECTS: Readonly<Record<string, string>> = {
  chat: 'OpenAI Chat Completions',
  messages: 'Anthropic Messages',
  responses: 'OpenAI Responses',
  'images.generations': 'OpenAI Images (generations)',
  'images.edits': 'OpenAI Images (edits)',
  'videos.generations': 'Video generations',
  embeddings: 'OpenAI Embeddings',
};

const WIDTH = 600;
const ROW = 26;
const LABEL = 190;

function attemptLabel(attempt: UpstreamAttempt): string {
  return `${attempt.provider} · ${attempt.upstreamModel}`;
}

function outcomeText(attempt: UpstreamAttempt): string {
  switch (attempt.outcome) {
    case 'served':
      return 'served';
    case 'failed':
      return `failed: ${attempt.status}${attempt.errorCode ? ` ${attempt.errorCode}` : ''}`;
    case 'skipped':
      return 'skipped: circuit open';
  }
}

/** Why the next attempt was made: what became of this one. */
function fallbackReason(attempt: UpstreamAttempt, last: boolean): string {
  if (last) return '';
  if (attempt.outcome === 'skipped') return 'circuit breaker open';
  if (attempt.outcome === 'failed') return attempt.message;
  return '';
}

/** The attempts on one time axis (SVG), then the same figures as a table. */
export function waterfall(attempts: readonly UpstreamAttempt[], totalMs: number): Html {
  if (attempts.length === 0) return html`<p class="hint">No upstream attempt: the request was answered by the gateway alone.</p>`;
  const span = Math.max(totalMs, ...attempts.map((attempt) => attempt.startMs + ('durationMs' in attempt ? attempt.durationMs : 0)), 1);
  const scale = (ms: number) => (ms / span) * (WIDTH - LABEL - 10);
  const bars = attempts.map((attempt, index) => {
    const y = index * ROW + 4;
    const x = LABEL + scale(attempt.startMs);
    const duration = 'durationMs' in attempt ? attempt.durationMs : 0;
    const firstByte = attempt.outcome === 'skipped' ? null : attempt.firstByteMs;
    return html`<g class="attempt ${attempt.outcome}">
      <text x="0" y="${y + 14}">${index + 1}. ${attemptLabel(attempt)}</text>
      <rect class="bar" x="${x.toFixed(1)}" y="${y}" width="${Math.max(scale(duration), 2).toFixed(1)}" height="${ROW - 10}"></rect>
      ${firstByte === null ? '' : html`<rect class="ttfb" x="${x.toFixed(1)}" y="${y + ROW - 13}" width="${Math.max(scale(firstByte), 1).toFixed(1)}" height="3"></rect>`}
    </g>`;
  });
  const summary = attempts.map((attempt, index) => `${index + 1}: ${attemptLabel(attempt)} ${outcomeText(attempt)}`).join('; ');
  return html`<svg class="waterfall" viewBox="0 0 ${WIDTH} ${attempts.length * ROW + 6}" role="img" aria-label="Upstream attempts over ${span} ms: ${summary}">
      ${bars}
    </svg>
    <table data-testid="attempts">
      <caption>Upstream attempts, in order (times from the request's arrival)</caption>
      <thead><tr><th>#</th><th>Endpoint</th><th>Outcome</th><th class="num">Start, ms</th><th class="num">First byte, ms</th><th class="num">Duration, ms</th><th>Why the next was tried</th></tr></thead>
      <tbody>
        ${attempts.map(
          (attempt, index) => html`<tr>
            <td>${index + 1}</td>
            <td>${attemptLabel(attempt)}</td>
            <td>${outcomeText(attempt)}</td>
            <td class="num">${attempt.startMs}</td>
            <td class="num">${attempt.outcome === 'skipped' ? '—' : (attempt.firstByteMs ?? '—')}</td>
            <td class="num">${attempt.outcome === 'skipped' ? '—' : attempt.durationMs}</td>
            <td>${fallbackReason(attempt, index === attempts.length - 1)}</td>
          </tr>`,
        )}
      </tbody>
    </table>`;
}

function usageOf(record: RequestLogRecord): Usage {
  return {
    inputTokens: record.inputTokens,
    cacheReadTokens: record.cacheReadTokens,
    cacheWriteTokens: record.cacheWriteTokens,
    ...(record.cacheWrite1hTokens === null ? {} : { cacheWrite1hTokens: record.cacheWrite1hTokens }),
    outputTokens: record.outputTokens,
    reasoningTokens: record.reasoningTokens,
  };
}

/** USD per million tokens of a pico-USD per-token rate. */
function perMillion(rate: Picos): string {
  return formatUsd(rate * 1_000_000n);
}

/**
 * The charged cost beside the catalog's arithmetic: each metered quantity times its price, the
 * reference sum, the owner's rate. The figures are today's catalog and rate: a request priced
 * before a change shows the difference rather than hiding it.
 */
export function costBreakdown(record: RequestLogRecord, endpoint: RouteEndpoint | undefined, rate: RateMultiplier): Html {
  const charged = html`<p>Charged <strong data-testid="charged">${formatUsd(record.cost)} USD</strong> (the <code>x-gateway-cost-usd</code> figure)${
    record.overHold > 0n ? html`; ${formatUsd(record.overHold)} USD more was reported than the hold allowed and not charged` : ''
  }.</p>`;
  if (!endpoint) return html`${charged}<p class="hint">The route that served it is no longer in the catalog, or none did.</p>`;
  if (endpoint.prices.unit !== 'per_1m_tokens') {
    const price = endpoint.prices.perImage ?? endpoint.prices.perSecond ?? endpoint.prices.perRequest;
    return html`${charged}<p>Priced ${endpoint.prices.unit.replace(/_/g, ' ')}${price === undefined ? '' : html` at ${formatUsd(price)} USD`}, times the rate ${formatRateMultiplier(rate)}.</p>`;
  }
  const usage = usageOf(record);
  const rates = tierFor(endpoint.prices, totalInputTokens(usage));
  const input = rates.input ?? 0n;
  const lines: [string, number, Picos][] = [
    ['Input tokens', usage.inputTokens, input],
    ['Cache read tokens', usage.cacheReadTokens, rates.cacheRead ?? input],
    ['Cache write tokens', usage.cacheWriteTokens, rates.cacheWrite ?? input],
    ['Output tokens (reasoning included)', usage.outputTokens, rates.output ?? 0n],
  ];
  const reference = referenceCost(endpoint.prices, usage, record.searchUnits);
  const recomputed = applyRate(reference, rate);
  return html`${charged}
    <table data-testid="cost">
      <caption>How the catalog prices it (${endpoint.prices.longContext && rates === endpoint.prices.longContext ? 'long-context' : 'standard'} rates)</caption>
      <thead><tr><th>Meter</th><th class="num">Quantity</th><th class="num">USD per 1M</th><th class="num">USD</th></tr></thead>
      <tbody>
        ${lines.map(
          ([label, quantity, price]) =>
            html`<tr><td>${label}</td><td class="num">${quantity}</td><td class="num">${perMillion(price)}</td><td class="num">${formatUsd(BigInt(quantity) * price)}</td></tr>`,
        )}
        ${endpoint.prices.perRequest ? html`<tr><td>Per request</td><td class="num">1</td><td class="num"></td><td class="num">${formatUsd(endpoint.prices.perRequest)}</td></tr>` : ''}
        ${record.searchUnits > 0 ? html`<tr><td>Search units</td><td class="num">${record.searchUnits}</td><td class="num"></td><td class="num">${formatUsd(BigInt(record.searchUnits) * (endpoint.prices.searchPerUnit ?? 0n))}</td></tr>` : ''}
        <tr><th scope="row">Reference cost</th><td></td><td></td><td class="num">${formatUsd(reference)}</td></tr>
        <tr><th scope="row">× account rate ${formatRateMultiplier(rate)}</th><td></td><td></td><td class="num" data-testid="recomputed">${formatUsd(recomputed)}</td></tr>
      </tbody>
    </table>
    ${recomputed === record.cost + record.overHold || record.status !== 'completed' ? '' : html`<p class="hint">The catalog's prices or the rate changed since the request was priced.</p>`}`;
}

type Part = { kind: 'text' | 'reasoning'; text: string } | { kind: 'tool_call'; name: string; arguments: string };

const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const asRecord = (value: unknown): Record<string, unknown> => (value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {});
const asText = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : JSON.stringify(value));

/** The parts of a stored text answer, in any of the dialects' shapes (chat, messages, responses). */
function textParts(output: unknown): Part[] {
  const body = asRecord(output);
  const parts: Part[] = [];
  for (const choice of asArray(body.choices)) {
    const message = asRecord(asRecord(choice).message);
    const reasoning = message.reasoning_content ?? message.reasoning;
    if (reasoning) parts.push({ kind: 'reasoning', text: asText(reasoning) });
    if (message.content) parts.push({ kind: 'text', text: asText(message.content) });
    for (const call of asArray(message.tool_calls)) {
      const fn = asRecord(asRecord(call).function);
      parts.push({ kind: 'tool_call', name: asText(fn.name), arguments: asText(fn.arguments) });
    }
  }
  if (body.type === 'message') {
    for (const block of asArray(body.content).map(asRecord)) {
      if (block.type === 'text') parts.push({ kind: 'text', text: asText(block.text) });
      else if (block.type === 'thinking') parts.push({ kind: 'reasoning', text: asText(block.thinking) });
      else if (block.type === 'tool_use') parts.push({ kind: 'tool_call', name: asText(block.name), arguments: JSON.stringify(block.input ?? {}) });
    }
  }
  for (const item of asArray(body.output).map(asRecord)) {
    if (item.type === 'message') for (const content of asArray(item.content).map(asRecord)) parts.push({ kind: 'text', text: asText(content.text) });
    else if (item.type === 'reasoning')
      parts.push({
        kind: 'reasoning',
        text: asArray(item.summary)
          .map((entry) => asText(asRecord(entry).text))
          .join('\n'),
      });
    else if (item.type === 'function_call') parts.push({ kind: 'tool_call', name: asText(item.name), arguments: asText(item.arguments) });
  }
  return parts;
}

/** The stored output: what kind of file each stored blob is decides its element. */
export function outputView(record: RequestLogRecord, now: number, fileUrl: (name: string) => string, contentTypes: ReadonlyMap<string, string>): Html {
  if (now > record.expiresAt) return html`<p class="hint">The output is no longer kept.</p>`;
  const files = [...contentTypes.entries()];
  const media = files.map(([name, type]) => {
    if (type.startsWith('image/')) return html`<figure><img src="${fileUrl(name)}" alt="Generated image ${name}"><figcaption>${name}</figcaption></figure>`;
    if (type.startsWith('video/'))
      return html`<figure><video controls preload="metadata" src="${fileUrl(name)}" data-testid="video" aria-label="Generated video ${name}"></video><figcaption>${name}</figcaption></figure>`;
    return html`<p><a href="${fileUrl(name)}">${name}</a> (${type})</p>`;
  });
  const parts = textParts(record.output);
  const text = parts.map((part) => {
    switch (part.kind) {
      case 'text':
        return html`<section class="part text" aria-label="Text"><h3>Text</h3><pre>${part.text}</pre></section>`;
      case 'reasoning':
        return html`<section class="part reasoning" aria-label="Reasoning"><h3>Reasoning</h3><pre>${part.text}</pre></section>`;
      case 'tool_call':
        return html`<section class="part tool" aria-label="Tool call ${part.name}"><h3>Tool call: <code>${part.name}</code></h3><pre>${part.arguments}</pre></section>`;
    }
  });
  if (media.length === 0 && text.length === 0) {
    return record.output === null
      ? html`<p class="hint">No output was stored.</p>`
      : html`<details><summary>The stored output as JSON</summary><pre>${JSON.stringify(record.output, null, 2)}</pre></details>`;
  }
  return html`${media}${text}`;
}
