'use strict';

// node's HTTP/2 server tests left out of the N/M count of run.js --http2,
// with the reason (test/node-compat/README.md). As excluded.js: only tests
// that reach into node internals a different server cannot have, or that
// exercise a documented refusal (docs/http2.md, docs/compat.md,
// docs/api.md). Tests whose `// Flags:` line has --expose-internals are
// left out by run.js itself.
const refusal = (what) => `documented refusal: ${what}`;
const push = refusal('server push (pushStream / createPushResponse); browsers removed it (docs/http2.md "Not done yet")');
const foreign = refusal("server.emit('connection', duplex): a stream sluice did not accept is served by node's own HTTP/1.1 code (docs/compat.md)");
const http1 = refusal('the secure server serves http/1.1 by ALPN as well (allowHTTP1 defaults to true, docs/api.md): no unknownProtocol');
const shared = refusal("sluice's createServer / createSecureServer / server.setTimeout are node:http's and node:https' too, which accept what node:http2 refuses here (null options, a function as createSecureServer's options, setTimeout(ms, null)) (docs/http2.md)");
const socketProxy = refusal("req.socket is the connection's socket, not node's per-stream proxy of it: setting its properties does not reach req.stream (docs/compat.md)");

module.exports = {
  'test-http2-client-data-end.js': push,
  'test-http2-compat-serverresponse-createpushresponse.js': push,
  'test-http2-dont-lose-data.js': push,
  'test-http2-options-max-reserved-streams.js': push,
  'test-http2-respond-file-push.js': push,
  'test-http2-server-push-disabled.js': push,
  'test-http2-server-push-stream.js': push,
  'test-http2-server-push-stream-errors-args.js': push,
  'test-http2-server-push-stream-head.js': push,
  'test-http2-generic-streams.js': foreign,
  'test-http2-generic-streams-sendfile.js': foreign,
  'test-http2-autoselect-protocol.js': foreign,
  'test-http2-backpressure.js': foreign,
  'test-http2-padding-aligned.js': foreign,
  'test-http2-sensitive-headers.js': foreign,
  'test-http2-session-unref.js': foreign,
  'test-http2-socket-close.js': foreign,
  'test-http2-write-finishes-after-stream-destroy.js': foreign,
  'test-http2-priority-event.js': refusal("PRIORITY frames: no stream.priority() effect and no 'priority' events (docs/http2.md)"),
  'test-http2-allow-http1.js': http1,
  'test-http2-server-unknown-protocol.js': http1,
  'test-http2-https-fallback.js': http1,
  'test-http2-https-fallback-http-server-options.js': http1,
  'test-http2-client-connection-tunnelling.js': foreign,
  'test-http2-client-proxy-over-http2.js': foreign,
  'test-http2-createserver-options.js': shared,
  'test-http2-createsecureserver-options.js': shared,
  'test-http2-server-settimeout-no-callback.js': shared,
  'test-http2-compat-socket-set.js': socketProxy,
  'test-http2-compat-serverrequest-end.js': socketProxy,
  'test-http2-compat-serverresponse-drain.js': 'reaches into node internals: res.stream._writableState.highWaterMark governs node\'s compat writes, which go through res.stream; sluice\'s go to the native stream (docs/http2.md)',
  'test-http2-update-settings.js': 'reaches into node internals: the server\'s private options symbol (server[kOptions].settings)',
  'test-http2-ping-unsolicited-ack.js': refusal("an unsolicited PING ack is ignored (RFC 9113 6.7, h2spec 6.7/2), where node's server makes it a connection error (docs/http2.md)"),
  'test-http2-settings-unsolicited-ack.js': "node's exact first SETTINGS bytes (empty: node advertises nothing by default); sluice's first SETTINGS carries its limits (docs/http2.md)",
  'test-http2-server-settimeout-no-callback.js': refusal('server.setTimeout(ms, null) is accepted: one server serves HTTP/1.1 too, where node:http accepts a null callback (docs/http2.md)'),
};
