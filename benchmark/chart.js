'use strict';
// SVG bar charts of a benchmark run, drawn from the same result objects the
// tables are printed from (run.js `all`, also what --json writes): one chart
// per suite (case file), two panels side by side — req/s (higher is better)
// and server CPU per unit (µs per request, or CPU s per GB for uploads;
// lower is better) — one bar per server variant and case, the median of
// the runs, min–max as a whisker. Plain SVG text, no dependency, no service.
//
//   node benchmark/run.js --chart                 # run, then write docs/img/bench-<suite>.svg
//   node benchmark/run.js --chart-from run.json   # redraw from a --json file, no run

const fs = require('node:fs');
const path = require('node:path');

// One colour per variant position (sluice first in every case file).
const PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];

const CPU_METRICS = {
  cpuUsPerReq: { label: 'server CPU µs per request', digits: 0 },
  cpuSecPerGB: { label: 'server CPU s per GB uploaded', digits: 2 },
};

function median(values) {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

function esc(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function fmt(x, digits) {
  if (!Number.isFinite(x)) return '–';
  if (digits === undefined) digits = x >= 100 ? 0 : x >= 10 ? 1 : 2;
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

// The bars of one group: [{ case, variants: [{ label, rps: {med,min,max}, cpu: {...} }] }].
function collect(group, cpuKey) {
  const stat = (runs, key) => {
    const v = runs.map((m) => m[key]).filter(Number.isFinite);
    return { med: median(v), min: v.length ? Math.min(...v) : NaN, max: v.length ? Math.max(...v) : NaN, n: v.length };
  };
  return group.results.map((res) => ({
    case: res.case,
    variants: res.variants.map((v) => ({
      label: v.label,
      failed: !v.runs.length,
      rps: stat(v.runs, 'rps'),
      cpu: stat(v.runs, cpuKey),
    })),
  }));
}

// Render one suite. group: { group, title, results }, machine: run.js
// machineInfo(); cpuKey: the CPU metric of the suite (its ratioCpuMetric).
function renderSuite(group, machine, cpuKey = 'cpuUsPerReq') {
  const metric = CPU_METRICS[cpuKey] || { label: cpuKey, digits: undefined };
  const rows = collect(group, cpuKey);
  const labels = [];
  for (const r of rows) for (const v of r.variants) if (!labels.includes(v.label)) labels.push(v.label);
  const colour = (label) => PALETTE[labels.indexOf(label) % PALETTE.length];

  const W = 960;
  const labelW = 230;
  const gap = 40;
  const panelW = (W - labelW - gap - 20) / 2;
  const barH = 14;
  const barGap = 3;
  const caseGap = 12;
  const top = 78 + Math.ceil(labels.length / 3) * 18;
  let y = top + 18;
  const caseY = rows.map((r) => {
    const y0 = y;
    y += r.variants.length * (barH + barGap) + caseGap;
    return y0;
  });
  const H = y + 10;

  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="10" y="20" font-size="14" font-weight="bold">${esc(group.title)}</text>`);
  const runs = [...new Set(group.results.map((r) => `${r.runs} run(s) x ${r.duration} s`))].join('; ');
  const when = machine ? `${machine.date}, ${machine.cpus} CPUs (${machine.model}), node ${machine.node}` : '';
  out.push(`<text x="10" y="38" fill="#444">${esc(`${when}; ${runs}; bar: median, whisker: min–max, each case on its own scale`)}</text>`);
  out.push(`<text x="10" y="54" fill="#444">${esc('server pinned to CPU 0, load generator to CPU 1; a shared machine: compare ratios, not absolute numbers')}</text>`);
  labels.forEach((label, i) => {
    const lx = 10 + (i % 3) * 300;
    const ly = 72 + Math.floor(i / 3) * 18;
    out.push(`<rect x="${lx}" y="${ly - 10}" width="12" height="12" fill="${colour(label)}"/>`);
    out.push(`<text x="${lx + 18}" y="${ly}">${esc(label)}</text>`);
  });

  const panels = [
    { key: 'rps', title: 'requests per second (higher is better)', x: labelW, digits: 0 },
    { key: 'cpu', title: `${metric.label} (lower is better)`, x: labelW + panelW + gap, digits: metric.digits },
  ];
  // Each case has its own scale (its longest bar fills the panel): cases
  // differ by orders of magnitude (1 KiB vs 1 MiB files), and what a chart
  // is for is the comparison of servers within a case; the numbers are
  // printed on the bars.
  for (const p of panels) {
    out.push(`<text x="${p.x}" y="${top}" font-weight="bold">${esc(p.title)}</text>`);
    rows.forEach((r, ri) => {
      const top = (v) => (Number.isFinite(v[p.key].max) ? v[p.key].max : v[p.key].med);
      const maxV = Math.max(...r.variants.map(top).filter(Number.isFinite), 0) || 1;
      const sx = (v) => p.x + (v / maxV) * (panelW - 70);
      r.variants.forEach((v, vi) => {
        const by = caseY[ri] + vi * (barH + barGap);
        const s = v[p.key];
        if (v.failed || !Number.isFinite(s.med)) {
          out.push(`<text x="${p.x + 4}" y="${by + barH - 3}" fill="#b00">no result</text>`);
          return;
        }
        const w = Math.max(1, sx(s.med) - p.x);
        out.push(`<rect x="${p.x}" y="${by}" width="${w.toFixed(1)}" height="${barH}" fill="${colour(v.label)}"><title>${esc(`${r.case} / ${v.label}: ${fmt(s.med, p.digits)}`)}</title></rect>`);
        if (s.n > 1 && s.max > s.min) {
          const wy = by + barH / 2;
          out.push(`<line x1="${sx(s.min).toFixed(1)}" y1="${wy}" x2="${sx(s.max).toFixed(1)}" y2="${wy}" stroke="#222"/>`);
        }
        out.push(`<text x="${(Math.max(sx(s.med), s.n > 1 ? sx(s.max) : 0) + 4).toFixed(1)}" y="${by + barH - 3}">${esc(fmt(s.med, p.digits))}</text>`);
      });
      out.push(`<line x1="${p.x}" y1="${caseY[ri] - 2}" x2="${p.x}" y2="${caseY[ri] + r.variants.length * (barH + barGap) - barGap + 2}" stroke="#888"/>`);
    });
  }
  rows.forEach((r, ri) => {
    const h = r.variants.length * (barH + barGap) - barGap;
    out.push(`<text x="${labelW - 8}" y="${(caseY[ri] + h / 2 + 4).toFixed(1)}" text-anchor="end">${esc(r.case)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

// The file a suite's chart goes to: docs/img/bench-http2-respond_with_file.svg.
function chartFile(dir, group) {
  return path.join(dir, `bench-${group.replace(/[\\/]/g, '-')}.svg`);
}

// Write one SVG per suite of a run (`all` as run.js builds it, or a --json
// file read back); cpuKeys: group -> CPU metric. Returns the files written.
function writeCharts(all, dir, cpuKeys = {}) {
  fs.mkdirSync(dir, { recursive: true });
  const files = [];
  for (const g of all.groups) {
    const file = chartFile(dir, g.group);
    fs.writeFileSync(file, renderSuite(g, all.machine, g.cpuMetric || cpuKeys[g.group]));
    files.push(file);
  }
  return files;
}

module.exports = { renderSuite, writeCharts, chartFile };
