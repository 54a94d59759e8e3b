'use strict';
// Statistics over runs and the aligned text / Markdown tables the runner
// prints.

function median(values) {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

function min(values) {
  const v = values.filter((x) => Number.isFinite(x));
  return v.length ? Math.min(...v) : NaN;
}

function max(values) {
  const v = values.filter((x) => Number.isFinite(x));
  return v.length ? Math.max(...v) : NaN;
}

function fmtNum(x, digits) {
  if (!Number.isFinite(x)) return '-';
  if (digits === undefined) {
    const a = Math.abs(x);
    digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  }
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function fmtRate(values) {
  const m = median(values);
  if (!Number.isFinite(m)) return '-';
  const n = values.filter(Number.isFinite).length;
  if (n < 2) return fmtNum(m, 0);
  return `${fmtNum(m, 0)} (${fmtNum(min(values), 0)}–${fmtNum(max(values), 0)})`;
}

function fmtRatio(x) {
  return Number.isFinite(x) ? `${x.toFixed(2)}x` : '-';
}

function indent(text, pad) {
  return text.split('\n').map((l) => pad + l).join('\n');
}

// Print rows (arrays of strings) under headers, aligned; numbers right-aligned.
function formatTable(headers, rows, { markdown = false } = {}) {
  const widths = headers.map((h, i) => Math.max(strlen(h), ...rows.map((r) => strlen(r[i] ?? ''))));
  const right = headers.map((_, i) => rows.some((r) => /^[\d,.–()x\s-]+$/.test(r[i] || '') && /\d/.test(r[i] || '')));
  const pad = (s, i) => {
    s = String(s ?? '');
    const fill = ' '.repeat(widths[i] - strlen(s));
    return right[i] ? fill + s : s + fill;
  };
  const lines = [];
  if (markdown) {
    lines.push(`| ${headers.map(pad).join(' | ')} |`);
    lines.push(`| ${widths.map((w, i) => (right[i] ? '-'.repeat(w - 1) + ':' : '-'.repeat(w))).join(' | ')} |`);
    for (const r of rows) lines.push(`| ${r.map(pad).join(' | ')} |`);
  } else {
    lines.push(headers.map(pad).join('  '));
    lines.push(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const r of rows) lines.push(r.map(pad).join('  '));
  }
  return lines.join('\n');
}

function strlen(s) {
  return [...String(s)].length;
}

module.exports = { median, min, max, fmtNum, fmtRate, fmtRatio, formatTable, indent };
