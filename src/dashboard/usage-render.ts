/**
 * A usage view as HTML (docs/dashboard.md, "Usage"): totals, a chart per measure with a table under
 * it (the chart script reads the table, so the figures exist once and work without the script), the
 * breakdown, and the view's form. Pure functions of the view and its rows, so that they can run where
 * the rows are read (usage-formats.ts) rather than on the server's event loop.
 */
import { formatUsd, type Picos } from '../core/money.ts';
import { USAGE_DIMENSIONS, type UsageFigures, type UsageRow } from '../storage/usage.ts';
import { USAGE_GRAINS } from '../storage/usage-rollups.ts';
import { html, type Html } from './html.ts';
import { notice } from './layout.ts';
import { DIMENSION_LABELS, ENDPOINT_FAMILIES, STATUSES, viewSearch, type UsageView } from './usage-view.ts';

/** Groups drawn apart in a chart; the rest are summed as "other" (the breakdown table lists each). */
const CHARTED_GROUPS = 8;
const OTHER = 'other';

const ZERO: UsageFigures = {
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  reasoningTokens: 0,
  images: 0,
  videoSeconds: 0,
  searchUnits: 0,
  cost: 0n,
  cacheSavings: 0n,
};

function addFigures(a: UsageFigures, b: UsageFigures): UsageFigures {
  return {
    requests: a.requests + b.requests,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    images: a.images + b.images,
    videoSeconds: a.videoSeconds + b.videoSeconds,
    searchUnits: a.searchUnits + b.searchUnits,
    cost: a.cost + b.cost,
    cacheSavings: a.cacheSavings + b.cacheSavings,
  };
}

function groupLabel(group: string | null): string {
  return group === null ? 'All' : group === '' ? '(none)' : group;
}

function periodLabel(period: number, grain: UsageView['query']['grain']): string {
  const iso = new Date(period).toISOString();
  return grain === 'day' ? iso.slice(0, 10) : `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

// One formatter for every figure: `toLocaleString` builds ICU's number formatter afresh at each call,
// which was two thirds of a usage page's CPU (docs/dashboard.md, "What the dashboard costs the gateway").
// Built at the first page rather than at start, where it cost some 12 ms.
let counts: Intl.NumberFormat | undefined;
const count = (value: number) => (counts ??= new Intl.NumberFormat('en-US')).format(value);
const usd = (picos: Picos) => `${formatUsd(picos)} USD`;

/** Every period of the view, empty ones included, so that a chart's gaps show. */
function periodsOf(view: UsageView): number[] {
  const size = USAGE_GRAINS[view.query.grain];
  const periods: number[] = [];
  for (let period = view.query.from - (view.query.from % size); period < view.query.to; period += size) periods.push(period);
  return periods;
}

interface Breakdown {
  /** Each group's totals over the view, dearest first. */
  readonly groups: readonly (readonly [string | null, UsageFigures])[];
  /** The groups a chart draws apart (the rest are OTHER). */
  readonly charted: ReadonlySet<string | null>;
  readonly total: UsageFigures;
}

function breakdown(rows: readonly UsageRow[]): Breakdown {
  const byGroup = new Map<string | null, UsageFigures>();
  for (const row of rows) byGroup.set(row.group, addFigures(byGroup.get(row.group) ?? ZERO, row));
  const groups = [...byGroup].sort((a, b) => (b[1].cost > a[1].cost ? 1 : b[1].cost < a[1].cost ? -1 : b[1].requests - a[1].requests));
  const total = groups.reduce((sum, [, figures]) => addFigures(sum, figures), ZERO);
  return { groups, charted: new Set(groups.slice(0, CHARTED_GROUPS).map(([group]) => group)), total };
}

/** A chart's table: a row per period, a column per charted group (and "other"), the total last. */
function seriesTable(
  id: string,
  caption: string,
  view: UsageView,
  rows: readonly UsageRow[],
  shape: Breakdown,
  value: (figures: UsageFigures) => number | bigint,
  unit: 'USD' | '',
): Html {
  const show = unit === 'USD' ? usdShown : countShown;
  const columns: (string | null)[] = [...shape.charted];
  const hasOther = shape.groups.length > columns.length;
  const cells = new Map<number, Map<string | null, number | bigint>>();
  for (const row of rows) {
    const column = shape.charted.has(row.group) ? row.group : OTHER;
    const period = cells.get(row.period) ?? new Map<string | null, number | bigint>();
    const before = period.get(column);
    const added = value(row);
    period.set(column, before === undefined ? added : typeof before === 'bigint' ? before + (added as bigint) : before + (added as number));
    cells.set(row.period, period);
  }
  const zero = typeof value(ZERO) === 'bigint' ? 0n : 0;
  const headers = [...columns.map(groupLabel), ...(hasOther ? [OTHER] : [])];
  const keys: (string | null)[] = [...columns, ...(hasOther ? [OTHER] : [])];
  return html`<figure class="usage-chart">
    <div class="chart-box" hidden><canvas id="${id}-chart" role="img" aria-label="${caption}: a chart of the table below"></canvas></div>
    <div class="table-scroll" tabindex="0" role="region" aria-label="${caption}: table">
    <table id="${id}" data-chart="${id}-chart" data-unit="${unit}">
      <caption>${caption}</caption>
      <thead><tr><th scope="col">${view.query.grain === 'day' ? 'Day (UTC)' : 'Hour (UTC)'}</th>${headers.map(
        (header) => html`<th scope="col" class="num" data-series>${header}</th>`,
      )}<th scope="col" class="num">Total</th></tr></thead>
      <tbody>
        ${periodsOf(view).map((period) => {
          const row = cells.get(period);
          const values = keys.map((key) => row?.get(key) ?? zero);
          const sum = values.reduce<number | bigint>((a, b) => (typeof a === 'bigint' ? a + (b as bigint) : a + (b as number)), zero);
          return html`<tr><th scope="row">${periodLabel(period, view.query.grain)}</th>${values.map(
            (cell) => html`<td class="num" data-value="${chartValue(cell)}">${show(cell)}</td>`,
          )}<td class="num">${show(sum)}</td></tr>`;
        })}
      </tbody>
    </table>
    </div>
  </figure>`;
}

/** A cell's value for the chart: USD as a decimal number (a chart needs no pico precision; the cell text keeps it). */
function chartValue(value: number | bigint): string {
  return typeof value === 'bigint' ? formatUsd(value) : String(value);
}

function usdShown(value: number | bigint): string {
  return formatUsd(value as bigint);
}

function countShown(value: number | bigint): string {
  return count(Number(value));
}

/** The tokens chart: one series per kind of token, not per group. */
function tokensTable(view: UsageView, rows: readonly UsageRow[]): Html {
  const kinds = [
    ['Input', (figures: UsageFigures) => figures.inputTokens],
    ['Output', (figures: UsageFigures) => figures.outputTokens],
    ['Cache read', (figures: UsageFigures) => figures.cacheReadTokens],
    ['Cache write', (figures: UsageFigures) => figures.cacheWriteTokens],
    ['Reasoning (part of output)', (figures: UsageFigures) => figures.reasoningTokens],
  ] as const;
  const byPeriod = new Map<number, UsageFigures>();
  for (const row of rows) byPeriod.set(row.period, addFigures(byPeriod.get(row.period) ?? ZERO, row));
  return html`<figure class="usage-chart">
    <div class="chart-box" hidden><canvas id="usage-tokens-chart" role="img" aria-label="Tokens per ${view.query.grain}: a chart of the table below"></canvas></div>
    <div class="table-scroll" tabindex="0" role="region" aria-label="Tokens per ${view.query.grain}: table">
    <table id="usage-tokens" data-chart="usage-tokens-chart" data-unit="">
      <caption>Tokens per ${view.query.grain}</caption>
      <thead><tr><th scope="col">${view.query.grain === 'day' ? 'Day (UTC)' : 'Hour (UTC)'}</th>${kinds.map(
        ([label]) => html`<th scope="col" class="num" data-series>${label}</th>`,
      )}</tr></thead>
      <tbody>
        ${periodsOf(view).map((period) => {
          const figures = byPeriod.get(period) ?? ZERO;
          return html`<tr><th scope="row">${periodLabel(period, view.query.grain)}</th>${kinds.map(
            ([, pick]) => html`<td class="num" data-value="${pick(figures)}">${count(pick(figures))}</td>`,
          )}</tr>`;
        })}
      </tbody>
    </table>
    </div>
  </figure>`;
}

function totals(total: UsageFigures): Html {
  const figures: [string, string, string][] = [
    ['Spend', usd(total.cost), 'usage-spend'],
    ['Requests', count(total.requests), 'usage-requests'],
    ['Input tokens', count(total.inputTokens), 'usage-input'],
    ['Output tokens', count(total.outputTokens), 'usage-output'],
    ['Cache read / write tokens', `${count(total.cacheReadTokens)} / ${count(total.cacheWriteTokens)}`, 'usage-cache'],
    ['Saved by cache reads', usd(total.cacheSavings), 'usage-savings'],
    ['Images', count(total.images), 'usage-images'],
    ['Video seconds', count(total.videoSeconds), 'usage-video'],
    ['Search units', count(total.searchUnits), 'usage-search'],
  ];
  return html`<section aria-labelledby="usage-totals-title"><h2 id="usage-totals-title">Totals</h2><div class="figures">${figures.map(
    ([label, value, id]) => html`<div class="figure">${label}<strong data-testid="${id}">${value}</strong></div>`,
  )}</div></section>`;
}

function breakdownTable(view: UsageView, shape: Breakdown): Html {
  const label = view.query.by ? DIMENSION_LABELS[view.query.by] : 'View';
  return html`<div class="table-scroll" tabindex="0" role="region" aria-label="Breakdown: table"><table id="usage-breakdown">
    <caption>${view.query.by ? html`By ${label.toLowerCase()}` : 'The whole view'}: every figure</caption>
    <thead><tr><th scope="col">${label}</th><th scope="col" class="num">Spend (USD)</th><th scope="col" class="num">Requests</th>
      <th scope="col" class="num">Input</th><th scope="col" class="num">Output</th><th scope="col" class="num">Cache read</th>
      <th scope="col" class="num">Cache write</th><th scope="col" class="num">Reasoning</th><th scope="col" class="num">Images</th>
      <th scope="col" class="num">Video (s)</th><th scope="col" class="num">Search</th><th scope="col" class="num">Saved (USD)</th></tr></thead>
    <tbody>${shape.groups.map(
      ([group, figures]) => html`<tr><th scope="row">${groupLabel(group)}</th><td class="num">${formatUsd(figures.cost)}</td>
        <td class="num">${count(figures.requests)}</td><td class="num">${count(figures.inputTokens)}</td><td class="num">${count(figures.outputTokens)}</td>
        <td class="num">${count(figures.cacheReadTokens)}</td><td class="num">${count(figures.cacheWriteTokens)}</td><td class="num">${count(figures.reasoningTokens)}</td>
        <td class="num">${count(figures.images)}</td><td class="num">${count(figures.videoSeconds)}</td><td class="num">${count(figures.searchUnits)}</td>
        <td class="num">${formatUsd(figures.cacheSavings)}</td></tr>`,
    )}</tbody>
  </table></div>`;
}

function select(name: string, label: string, current: string, options: readonly (readonly [string, string])[]): Html {
  return html`<div><label for="usage-${name}">${label}</label><select id="usage-${name}" name="${name}">${options.map(
    ([value, text]) => html`<option value="${value}"${value === current ? html` selected` : ''}>${text}</option>`,
  )}</select></div>`;
}

export function filterForm(view: UsageView): Html {
  const { query } = view;
  const text = (name: 'account' | 'organization' | 'key' | 'model' | 'provider', label: string) =>
    view.fixed.has(name)
      ? ''
      : html`<div><label for="usage-${name}">${label}</label><input id="usage-${name}" name="${name}" value="${query.filter[name] ?? ''}" placeholder="any"></div>`;
  return html`<form method="get" action="/dashboard/usage" class="filters" aria-label="Usage view">
    ${select('grain', 'Per', query.grain, [
      ['day', 'day'],
      ['hour', 'hour'],
    ])}
    <div><label for="usage-from">From</label><input id="usage-from" name="from" type="date" value="${view.fromDay}" required></div>
    <div><label for="usage-to">To (included)</label><input id="usage-to" name="to" type="date" value="${view.toDay}" required></div>
    ${select('by', 'Break down by', query.by ?? '', [['', 'nothing'], ...USAGE_DIMENSIONS.map((dimension) => [dimension, DIMENSION_LABELS[dimension].toLowerCase()] as const)])}
    ${text('account', 'Account')}
    ${text('organization', 'Organization')}
    ${text('key', 'Key id')}
    ${text('model', 'Model')}
    ${text('provider', 'Provider endpoint')}
    ${select('route', 'Endpoint family', query.filter.route ?? '', [['', 'any'], ...ENDPOINT_FAMILIES.map((family) => [family, family] as const)])}
    ${select('status', 'Status', query.filter.status ?? '', [['', 'any'], ...STATUSES.map((status) => [status, status] as const)])}
    <div class="actions"><button type="submit">Show</button></div>
  </form>`;
}

/** The whole page below the navigation: the view's form, then its figures. */
export function usageBody(view: UsageView, rows: readonly UsageRow[]): Html {
  const shape = breakdown(rows);
  const per = view.query.grain;
  return html`${filterForm(view)}
      <p><a href="/dashboard/usage.csv?${viewSearch(view)}" download>Download this view as CSV</a>
        · <a href="/dashboard/usage?${viewSearch(view, { grain: per === 'day' ? 'hour' : 'day' })}">View per ${per === 'day' ? 'hour' : 'day'}</a></p>
      ${rows.length === 0 ? notice('ok', 'No usage in this view.') : ''}
      ${totals(shape.total)}
      <section aria-labelledby="usage-spend-title"><h2 id="usage-spend-title">Spend</h2>
        ${seriesTable('usage-spend-table', `Spend per ${per} (USD)`, view, rows, shape, (figures) => figures.cost, 'USD')}</section>
      <section aria-labelledby="usage-requests-title"><h2 id="usage-requests-title">Requests</h2>
        ${seriesTable('usage-requests-table', `Requests per ${per}`, view, rows, shape, (figures) => figures.requests, '')}</section>
      <section aria-labelledby="usage-tokens-title"><h2 id="usage-tokens-title">Tokens</h2>${tokensTable(view, rows)}</section>
      <section aria-labelledby="usage-breakdown-title"><h2 id="usage-breakdown-title">Breakdown</h2>${breakdownTable(view, shape)}</section>`;
}
