'use strict';

// server.metrics(), the Prometheus text exposition and a prom-client
// collector over the counters the native server keeps
// (src/core/observe/server_metrics.h; docs/observability.md). Nothing here
// runs per request: the counters are read when asked.

const { kNative } = require('../common/symbols');
const { poolStatsOf } = require('../uploads/buffer_pool');
const fileCache = require('../files/open_file_cache');

// The protocol label of each native protocol slot (network.protocol.version).
const PROTOCOLS = ['1.1', '2', '3'];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];

// The native snapshot, or an empty one before the first listen.
function snapshot(server) {
  const m = server[kNative].metrics();
  if (m !== null) return m;
  return {
    methods: [], buckets: [], requests: [], durations: [], durationSum: [],
    connectionsAccepted: 0, connectionsOpen: 0, connectionsDropped: 0, bytesIn: 0, bytesOut: 0,
    h2ResetsReceived: 0, h2ResetsSent: 0, h2GoawaysReceived: 0, h2GoawaysSent: 0,
    websocketsOpen: 0, refused: {},
  };
}

// server.metrics(): a plain object.
//   requests: [{ protocol, method, statusClass, count }] (non-zero only)
//   duration: { [protocol]: { buckets: [le...], counts: [cumulative...],
//               count, sum } } in seconds, OpenTelemetry's
//               http.server.request.duration buckets
//   connections: { open, accepted, dropped }, bytes: { in, out }
//   http2: { resets: { received, sent }, goaways: { received, sent } }
//   accessLog: { written, dropped } (lines; with the accessLog option)
//   websockets: { open }, refused: { [reason]: n } (HTTP/1.1 requests the
//   server answered with an error itself: bad_request, timeout,
//   body_too_large, uri_too_long, headers_too_large, other)
//   bufferPool: the requestBufferAllocator pool's stats (with dryWaits) or
//   null; openFileCache: the process's open-file cache stats
function metrics(server) {
  const m = snapshot(server);
  const requests = [];
  const nm = m.methods.length;
  const nb = m.buckets.length + 1;
  for (let p = 0; p < PROTOCOLS.length && m.requests.length > 0; p++) {
    for (let i = 0; i < nm; i++) {
      for (let c = 0; c < STATUS_CLASSES.length; c++) {
        const count = m.requests[(p * nm + i) * STATUS_CLASSES.length + c];
        if (count > 0) {
          requests.push({ protocol: PROTOCOLS[p], method: m.methods[i], statusClass: STATUS_CLASSES[c], count });
        }
      }
    }
  }
  const duration = {};
  for (let p = 0; p < PROTOCOLS.length && m.durations.length > 0; p++) {
    const counts = [];
    let total = 0;
    for (let i = 0; i < nb; i++) {
      total += m.durations[p * nb + i];
      if (i < nb - 1) counts.push(total);
    }
    if (total === 0) continue;
    duration[PROTOCOLS[p]] = { buckets: m.buckets.slice(), counts, count: total, sum: m.durationSum[p] };
  }
  return {
    requests,
    duration,
    connections: { open: m.connectionsOpen, accepted: m.connectionsAccepted, dropped: m.connectionsDropped },
    bytes: { in: m.bytesIn, out: m.bytesOut },
    http2: {
      resets: { received: m.h2ResetsReceived, sent: m.h2ResetsSent },
      goaways: { received: m.h2GoawaysReceived, sent: m.h2GoawaysSent },
    },
    accessLog: m.accessLogWritten === undefined ? null :
      { written: m.accessLogWritten, dropped: m.accessLogDropped },
    websockets: { open: m.websocketsOpen },
    refused: m.refused,
    bufferPool: server.requestBufferAllocator ? poolStatsOf(server.requestBufferAllocator) : null,
    openFileCache: fileCache.stats(),
  };
}

// The metric families, as prom-client's get() shape: { name, help, type,
// values: [{ labels, value, metricName? }] }, for one or more servers
// (their series summed).
function families(servers) {
  const byKey = new Map();
  const add = (family, labels, value, metricName) => {
    const key = `${metricName || family.name}${JSON.stringify(labels)}`;
    const v = byKey.get(key);
    if (v !== undefined) v.value += value;
    else {
      const entry = { labels, value };
      if (metricName !== undefined) entry.metricName = metricName;
      byKey.set(key, entry);
      family.values.push(entry);
    }
  };
  const fam = (name, type, help) => ({ name, type, help, values: [], aggregator: 'sum' });
  const requests = fam('http_server_requests_total', 'counter',
    'HTTP requests answered, by protocol version, method and status class.');
  const duration = fam('http_server_request_duration_seconds', 'histogram',
    'Duration of HTTP server requests (head parsed to response done).');
  const open = fam('sluice_connections_open', 'gauge', 'Open connections.');
  const accepted = fam('sluice_connections_accepted_total', 'counter', 'Connections accepted.');
  const dropped = fam('sluice_connections_refused_total', 'counter',
    'Connections refused, by reason.');
  const bytesIn = fam('sluice_bytes_received_total', 'counter', 'Bytes read from connections.');
  const bytesOut = fam('sluice_bytes_sent_total', 'counter', 'Bytes written to connections.');
  const resets = fam('sluice_http2_resets_total', 'counter',
    'HTTP/2 streams closed with an error code (RST_STREAM), by direction.');
  const goaways = fam('sluice_http2_goaways_total', 'counter', 'HTTP/2 GOAWAY frames, by direction.');
  const websockets = fam('sluice_websockets_open', 'gauge', 'Open WebSocket connections (HTTP/1.1 upgrades).');
  const refused = fam('sluice_requests_refused_total', 'counter',
    'HTTP/1.1 requests the server answered with an error itself and closed, by reason.');
  const pool = fam('sluice_buffer_pool_buffers', 'gauge', 'Request body pool buffers, by state.');
  const poolDry = fam('sluice_buffer_pool_dry_waits_total', 'counter',
    'Times the request body pool ran dry (reads stopped until a buffer came back).');
  const cache = fam('sluice_open_file_cache_lookups_total', 'counter',
    'Open-file cache lookups (process-wide), by result.');
  const logLines = fam('sluice_access_log_lines_total', 'counter',
    'Access log lines written, or dropped when the disk fell behind.');
  for (const server of servers) {
    const m = metrics(server);
    for (const r of m.requests) {
      add(requests, { network_protocol_version: r.protocol, http_request_method: r.method,
        status_class: r.statusClass }, r.count);
    }
    for (const [protocol, d] of Object.entries(m.duration)) {
      for (let i = 0; i < d.buckets.length; i++) {
        add(duration, { network_protocol_version: protocol, le: d.buckets[i] }, d.counts[i],
          'http_server_request_duration_seconds_bucket');
      }
      add(duration, { network_protocol_version: protocol, le: '+Inf' }, d.count,
        'http_server_request_duration_seconds_bucket');
      add(duration, { network_protocol_version: protocol }, d.sum, 'http_server_request_duration_seconds_sum');
      add(duration, { network_protocol_version: protocol }, d.count, 'http_server_request_duration_seconds_count');
    }
    add(open, {}, m.connections.open);
    add(accepted, {}, m.connections.accepted);
    add(dropped, { reason: 'max_connections' }, m.connections.dropped);
    add(bytesIn, {}, m.bytes.in);
    add(bytesOut, {}, m.bytes.out);
    for (const direction of ['received', 'sent']) {
      add(resets, { direction }, m.http2.resets[direction]);
      add(goaways, { direction }, m.http2.goaways[direction]);
    }
    add(websockets, {}, m.websockets.open);
    for (const [reason, n] of Object.entries(m.refused)) add(refused, { reason }, n);
    if (m.bufferPool !== null) {
      add(pool, { state: 'allocated' }, m.bufferPool.allocated);
      add(pool, { state: 'in_use' }, m.bufferPool.inUse);
      add(pool, { state: 'max' }, m.bufferPool.maxBuffers);
      add(poolDry, {}, m.bufferPool.dryWaits);
    }
    if (m.accessLog !== null) {
      add(logLines, { result: 'written' }, m.accessLog.written);
      add(logLines, { result: 'dropped' }, m.accessLog.dropped);
    }
  }
  if (servers.length > 0) {
    // Process-wide: counted once however many servers are exposed.
    const c = fileCache.stats();
    add(cache, { result: 'hit' }, c.hits);
    add(cache, { result: 'miss' }, c.misses);
  }
  return [requests, duration, open, accepted, dropped, bytesIn, bytesOut, resets, goaways,
    websockets, refused, pool, poolDry, cache, logLines];
}

function escapeLabel(v) {
  return String(v).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function formatValue(v) {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

// Prometheus's text exposition format (0.0.4) of `servers`' metrics.
function prometheusText(...servers) {
  let out = '';
  for (const f of families(servers)) {
    out += `# HELP ${f.name} ${f.help}\n# TYPE ${f.name} ${f.type}\n`;
    for (const v of f.values) {
      const labels = Object.entries(v.labels).map(([k, x]) => `${k}="${escapeLabel(x)}"`).join(',');
      out += `${v.metricName || f.name}${labels ? `{${labels}}` : ''} ${formatValue(v.value)}\n`;
    }
  }
  return out;
}

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

// A request listener (or Express/Connect middleware) answering the
// exposition of `servers`.
function prometheusHandler(...servers) {
  return (req, res) => {
    const body = prometheusText(...servers);
    res.writeHead(200, { 'content-type': CONTENT_TYPE, 'content-length': Buffer.byteLength(body) });
    res.end(req.method === 'HEAD' ? undefined : body);
  };
}

// Registers `servers`' metrics in a prom-client Registry (prom-client's
// own `register` when not given): each family is a metric object with
// prom-client's get() contract, read at each scrape.
function promClientCollector(registry, ...servers) {
  const names = families([]).map((f) => f.name);
  for (const name of names) {
    const f0 = families([]).find((f) => f.name === name);
    registry.registerMetric({
      name,
      help: f0.help,
      type: f0.type,
      aggregator: 'sum',
      get: async () => families(servers).find((f) => f.name === name),
      reset() {},
    });
  }
  return registry;
}

module.exports = { metrics, prometheusText, prometheusHandler, promClientCollector, CONTENT_TYPE };
