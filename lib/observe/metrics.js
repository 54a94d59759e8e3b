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

// The native snapshot: the TCP server's plus its HTTP/3 endpoint's (a
// secure server with http3; its counters go with it when it closes), or
// an empty one before the first listen.
function snapshot(server) {
  const m = server[kNative].metrics();
  const h3 = server._http3 ? server._http3.metrics() : null;
  if (m !== null && h3 !== null) return sum(m, h3);
  if (m !== null || h3 !== null) return m || h3;
  return {
    methods: [], buckets: [], requests: [], durations: [], durationSum: [], refusalNames: [],
    refused: [], streamsOpen: [], connectionsAccepted: 0, connectionsOpen: 0, connectionsDropped: 0,
    bytesIn: 0, bytesOut: 0, h2ResetsReceived: 0, h2ResetsSent: 0, h2GoawaysReceived: 0,
    h2GoawaysSent: 0, websocketsOpen: 0, wsMessagesReceived: 0, wsMessagesSent: 0,
    wsSendsDropped: 0, wsPublishesDropped: 0,
  };
}

// Two snapshots' counters added (arrays element by element; the name and
// bucket lists are the same in both).
function sum(a, b) {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    if (typeof v === 'number') out[k] = (a[k] || 0) + v;
    else if (Array.isArray(v) && typeof v[0] === 'number' && k !== 'buckets') out[k] = v.map((x, i) => x + a[k][i]);
  }
  return out;
}

// server.metrics(): a plain object.
//   requests: [{ protocol, method, statusClass, count }] (non-zero only)
//   duration: { [protocol]: { buckets: [le...], counts: [cumulative...],
//               count, sum } } in seconds, OpenTelemetry's
//               http.server.request.duration buckets
//   connections: { open, accepted, dropped }, bytes: { in, out }
//   streams: { [protocol]: open } (HTTP/2 and HTTP/3 request streams)
//   http2: { resets: { received, sent }, goaways: { received, sent } }
//   accessLog: { written, dropped } (lines; with the accessLog option)
//   websockets: { open, messages: { received, sent }, dropped: { sends,
//   publishes } }
//   refused: { [protocol]: { [reason]: n } } (requests the server refused
//   itself: bad_request, timeout, body_too_large, uri_too_long,
//   headers_too_large, flood, stream_limit, other)
//   bufferPool: the requestBufferAllocator pool's stats (with dryWaits) or
//   null; openFileCache: the process's open-file cache stats
function metrics(server) {
  const m = snapshot(server);
  const requests = [];
  const nm = m.methods.length;
  const nb = m.buckets.length + 1;
  const nr = m.refusalNames.length;
  const duration = {};
  const refused = {};
  const streams = {};
  for (let p = 0; p < PROTOCOLS.length && m.requests.length > 0; p++) {
    const protocol = PROTOCOLS[p];
    for (let i = 0; i < nm; i++) {
      for (let c = 0; c < STATUS_CLASSES.length; c++) {
        const count = m.requests[(p * nm + i) * STATUS_CLASSES.length + c];
        if (count > 0) requests.push({ protocol, method: m.methods[i], statusClass: STATUS_CLASSES[c], count });
      }
    }
    const counts = [];
    let total = 0;
    for (let i = 0; i < nb; i++) {
      total += m.durations[p * nb + i];
      if (i < nb - 1) counts.push(total);
    }
    if (total > 0) duration[protocol] = { buckets: m.buckets.slice(), counts, count: total, sum: m.durationSum[p] };
    refused[protocol] = {};
    for (let i = 0; i < nr; i++) refused[protocol][m.refusalNames[i]] = m.refused[p * nr + i];
    if (p > 0) streams[protocol] = m.streamsOpen[p];
  }
  return {
    requests,
    duration,
    connections: { open: m.connectionsOpen, accepted: m.connectionsAccepted, dropped: m.connectionsDropped },
    bytes: { in: m.bytesIn, out: m.bytesOut },
    streams,
    http2: {
      resets: { received: m.h2ResetsReceived, sent: m.h2ResetsSent },
      goaways: { received: m.h2GoawaysReceived, sent: m.h2GoawaysSent },
    },
    accessLog: m.accessLogWritten === undefined ? null :
      { written: m.accessLogWritten, dropped: m.accessLogDropped },
    websockets: {
      open: m.websocketsOpen,
      messages: { received: m.wsMessagesReceived, sent: m.wsMessagesSent },
      dropped: { sends: m.wsSendsDropped, publishes: m.wsPublishesDropped },
    },
    refused,
    bufferPool: server.requestBufferAllocator ? poolStatsOf(server.requestBufferAllocator) : null,
    openFileCache: fileCache.stats(),
  };
}

// Each family: [name, type, help, fill(m, add)] where fill adds one
// server's samples (add(labels, value, suffix?)).
const FAMILIES = [
  ['http_server_requests_total', 'counter',
    'HTTP requests answered, by protocol version, method and status class.', (m, add) => {
      for (const r of m.requests) {
        add({ network_protocol_version: r.protocol, http_request_method: r.method, status_class: r.statusClass },
          r.count);
      }
    }],
  ['http_server_request_duration_seconds', 'histogram',
    'Duration of HTTP server requests (head parsed to response done).', (m, add) => {
      for (const [protocol, d] of Object.entries(m.duration)) {
        const p = { network_protocol_version: protocol };
        for (let i = 0; i < d.buckets.length; i++) add({ ...p, le: d.buckets[i] }, d.counts[i], '_bucket');
        add({ ...p, le: '+Inf' }, d.count, '_bucket');
        add(p, d.sum, '_sum');
        add(p, d.count, '_count');
      }
    }],
  ['sluice_connections_open', 'gauge', 'Open connections.', (m, add) => add({}, m.connections.open)],
  ['sluice_connections_accepted_total', 'counter', 'Connections accepted.',
    (m, add) => add({}, m.connections.accepted)],
  ['sluice_connections_refused_total', 'counter', 'Connections refused, by reason.',
    (m, add) => add({ reason: 'max_connections' }, m.connections.dropped)],
  ['sluice_bytes_received_total', 'counter', 'Bytes read from connections.', (m, add) => add({}, m.bytes.in)],
  ['sluice_bytes_sent_total', 'counter', 'Bytes written to connections.', (m, add) => add({}, m.bytes.out)],
  ['sluice_streams_open', 'gauge', 'Open HTTP/2 and HTTP/3 request streams, by protocol version.',
    (m, add) => {
      for (const [protocol, n] of Object.entries(m.streams)) add({ network_protocol_version: protocol }, n);
    }],
  ['sluice_http2_resets_total', 'counter',
    'HTTP/2 streams closed with an error code (RST_STREAM), by direction.',
    (m, add) => { for (const d of DIRECTIONS) add({ direction: d }, m.http2.resets[d]); }],
  ['sluice_http2_goaways_total', 'counter', 'HTTP/2 GOAWAY frames, by direction.',
    (m, add) => { for (const d of DIRECTIONS) add({ direction: d }, m.http2.goaways[d]); }],
  ['sluice_websockets_open', 'gauge', 'Open WebSocket connections (HTTP/1.1 upgrades).',
    (m, add) => add({}, m.websockets.open)],
  ['sluice_websocket_messages_total', 'counter', 'WebSocket messages, by direction.',
    (m, add) => { for (const d of DIRECTIONS) add({ direction: d }, m.websockets.messages[d]); }],
  ['sluice_websocket_messages_dropped_total', 'counter',
    'WebSocket messages not sent for backpressure: a send, or a publish one subscriber missed.',
    (m, add) => {
      add({ kind: 'send' }, m.websockets.dropped.sends);
      add({ kind: 'publish' }, m.websockets.dropped.publishes);
    }],
  ['sluice_requests_refused_total', 'counter',
    'Requests the server refused itself, by protocol version and reason.', (m, add) => {
      for (const [protocol, reasons] of Object.entries(m.refused)) {
        for (const [reason, n] of Object.entries(reasons)) add({ network_protocol_version: protocol, reason }, n);
      }
    }],
  ['sluice_buffer_pool_buffers', 'gauge', 'Request body pool buffers, by state.', (m, add) => {
    if (m.bufferPool === null) return;
    add({ state: 'allocated' }, m.bufferPool.allocated);
    add({ state: 'in_use' }, m.bufferPool.inUse);
    add({ state: 'max' }, m.bufferPool.maxBuffers);
  }],
  ['sluice_buffer_pool_dry_waits_total', 'counter',
    'Times the request body pool ran dry (reads stopped until a buffer came back).',
    (m, add) => { if (m.bufferPool !== null) add({}, m.bufferPool.dryWaits); }],
  // Process-wide: counted once however many servers are exposed.
  ['sluice_open_file_cache_lookups_total', 'counter', 'Open-file cache lookups (process-wide), by result.',
    null],
  ['sluice_access_log_lines_total', 'counter',
    'Access log lines written, or dropped when the disk fell behind.', (m, add) => {
      if (m.accessLog === null) return;
      add({ result: 'written' }, m.accessLog.written);
      add({ result: 'dropped' }, m.accessLog.dropped);
    }],
];
const DIRECTIONS = ['received', 'sent'];

// The metric families, as prom-client's get() shape: { name, help, type,
// values: [{ labels, value, metricName? }] }, for one or more servers
// (their series summed).
function families(servers) {
  const out = FAMILIES.map(([name, type, help]) => ({ name, type, help, values: [], aggregator: 'sum' }));
  const adders = out.map((family) => {
    const byKey = new Map();
    return (labels, value, suffix) => {
      const metricName = suffix === undefined ? undefined : family.name + suffix;
      const key = `${suffix || ''}${JSON.stringify(labels)}`;
      const v = byKey.get(key);
      if (v !== undefined) {
        v.value += value;
        return;
      }
      const entry = { labels, value };
      if (metricName !== undefined) entry.metricName = metricName;
      byKey.set(key, entry);
      family.values.push(entry);
    };
  });
  for (const server of servers) {
    const m = metrics(server);
    FAMILIES.forEach(([, , , fill], i) => { if (fill !== null) fill(m, adders[i]); });
  }
  if (servers.length > 0) {
    const i = FAMILIES.findIndex(([, , , fill]) => fill === null);
    const c = fileCache.stats();
    adders[i]({ result: 'hit' }, c.hits);
    adders[i]({ result: 'miss' }, c.misses);
  }
  return out;
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
  for (const [name, type, help] of FAMILIES) {
    registry.registerMetric({
      name,
      help,
      type,
      aggregator: 'sum',
      get: async () => families(servers).find((f) => f.name === name),
      reset() {},
    });
  }
  return registry;
}

module.exports = { metrics, prometheusText, prometheusHandler, promClientCollector, CONTENT_TYPE };
