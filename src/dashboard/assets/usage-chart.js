// Draws each usage table marked data-chart as a stacked bar chart above it, with Chart.js (served by
// the gateway from its own node_modules; the CSP allows no other script). The table stays: it is
// the chart's text alternative and holds the exact figures.
/* global Chart */
const COLOURS = ['#0b5cad', '#c2410c', '#1e6b34', '#7c3aed', '#a4161a', '#0e7490', '#a16207', '#be185d', '#4a5360'];

for (const table of document.querySelectorAll('table[data-chart]')) {
  const canvas = document.getElementById(table.getAttribute('data-chart'));
  if (!canvas || typeof Chart === 'undefined') continue;
  const series = [...table.querySelectorAll('thead th[data-series]')];
  const rows = [...table.querySelectorAll('tbody tr')];
  const firstColumn = 1;
  const datasets = series.map((header, index) => ({
    label: header.textContent.trim(),
    backgroundColor: COLOURS[index % COLOURS.length],
    data: rows.map((row) => Number(row.children[firstColumn + index]?.getAttribute('data-value') ?? 0)),
  }));
  const unit = table.getAttribute('data-unit');
  canvas.parentElement.hidden = false;
  new Chart(canvas, {
    type: 'bar',
    data: { labels: rows.map((row) => row.children[0].textContent.trim()), datasets },
    options: {
      animation: false,
      maintainAspectRatio: false,
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: Boolean(unit), text: unit } } },
      plugins: { legend: { position: 'bottom' } },
    },
  });
}
