'use strict';

// node's diagnostics channels for servers, published by sluice with node's
// names, payloads and order, on the Node versions whose own servers
// publish them (docs/observability.md): a tracer that subscribes to
// 'http.server.request.start' (Sentry, OpenTelemetry's channel mode,
// dd-trace) sees sluice's requests as it sees node:http's.
//
// Zero cost when nobody subscribes: every publish site checks
// channel.hasSubscribers first and builds no payload otherwise. A channel
// node does not publish on the running version is null here, so its site
// costs one comparison and publishes nothing, as node.

const dc = require('diagnostics_channel');

const [major, minor] = process.versions.node.split('.').map(Number);

// True from `v22` on Node 22 and from `v24` on 24; any later major publishes.
function since(v22, v24) {
  if (major === 22) return minor >= v22;
  if (major === 24) return minor >= v24;
  return major >= 25;
}

function channel(name, published) {
  return published ? dc.channel(name) : null;
}

// HTTP/1.1 (node's _http_server.js): every supported Node publishes start
// and finish; response.created from 22.12 / 23.2.
const requestStart = dc.channel('http.server.request.start');
const responseFinish = dc.channel('http.server.response.finish');
const responseCreated = channel('http.server.response.created',
  major > 23 || (major === 23 && minor >= 2) || (major === 22 && minor >= 12));

// HTTP/2 streams (node's lib/internal/http2/core.js): created, start,
// finish and error from 22.17 / 24.2, close from 22.18 / 24.3.
const h2Published = since(17, 2);
const streamCreated = channel('http2.server.stream.created', h2Published);
const streamStart = channel('http2.server.stream.start', h2Published);
const streamFinish = channel('http2.server.stream.finish', h2Published);
const streamError = channel('http2.server.stream.error', h2Published);
const streamClose = channel('http2.server.stream.close', since(18, 3));

// ---- HTTP/1.1 -----------------------------------------------------------------

// A request's response was made (node: in ServerResponse's constructor,
// before 'http.server.request.start').
function publishResponseCreated(req, res) {
  responseCreated.publish({ request: req, response: res });
}

// Before the request is handed to 'request' / 'checkContinue' (node's
// parserOnIncoming, after the response exists).
function publishRequestStart(server, req, res) {
  requestStart.publish({ request: req, response: res, socket: req.socket, server });
}

// The response finished (node: its first 'finish' listener, so before the
// application's): publishes when subscribed. HTTP/1.1 responses only (_st:
// set by lib/http1/session.js; HTTP/2 compat responses publish nothing, as
// node's).
function finishObserved(res) {
  if (responseFinish.hasSubscribers && res._st !== undefined) publishResponseFinish(res);
}

function publishResponseFinish(res) {
  const socket = res.socket;
  responseFinish.publish({
    request: res.req, response: res, socket, server: socket === null ? null : socket.server,
  });
}

// ---- HTTP/2 and HTTP/3 streams ----------------------------------------------

// A request stream arrived: created then start, with its request headers,
// before 'stream' is emitted (node's onSessionHeaders).
function publishStreamStart(stream, headers) {
  if (streamCreated.hasSubscribers) streamCreated.publish({ stream, headers });
  if (streamStart.hasSubscribers) streamStart.publish({ stream, headers });
}

// node's Http2Stream state flags, as its 'finish' payload carries them.
const STREAM_FLAGS_READY = 0x1;
const STREAM_FLAGS_HEADERS_SENT = 0x4;
const STREAM_FLAGS_HEAD_REQUEST = 0x8;
const STREAM_FLAGS_HAS_TRAILERS = 0x20;

// stream.respond() handed the head over (node publishes 'finish' there):
// the headers as node sends them (the given fields, :status, date unless
// sendDate is false) and node's state flags for a stream at that point.
function publishStreamFinish(stream, sent, status, addDate, isHead, waitForTrailers) {
  const headers = { ...sent, ':status': status };
  if (addDate && headers.date === undefined) headers.date = new Date().toUTCString();
  const flags = STREAM_FLAGS_READY | STREAM_FLAGS_HEADERS_SENT |
    (isHead ? STREAM_FLAGS_HEAD_REQUEST : 0) | (waitForTrailers ? STREAM_FLAGS_HAS_TRAILERS : 0);
  streamFinish.publish({ stream, headers, flags });
}

module.exports = {
  requestStart,
  responseFinish,
  responseCreated,
  streamCreated,
  streamStart,
  streamFinish,
  streamError,
  streamClose,
  publishResponseCreated,
  publishRequestStart,
  publishResponseFinish,
  finishObserved,
  publishStreamStart,
  publishStreamFinish,
};
