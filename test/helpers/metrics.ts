/**
 * Reads one series out of Prometheus text (GET /metrics, or a registry's `metrics()`).
 */
import assert from 'node:assert/strict';

/** The value of the series `name{labels}` (exactly those labels); fails when it is absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .join(',');
  const series = wanted ? `${name}{${wanted}}` : name;
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  assert.ok(line, `series ${series} in the metrics`);
  return Number(line.slice(series.length + 1));
}
