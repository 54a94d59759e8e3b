'use strict';

// The bus between machines over Redis pub/sub, with the app's own clients
// (ioredis: one for publishing, one in subscriber mode, as socket.io's
// Redis adapter takes them).
//
// A Redis channel per topic (prefix + topic bytes): Redis sends a message
// only to the processes that listen to its topic, and a process listens to
// a topic only while it has a local subscriber (the bus tells us). A
// sharded scheme (a fixed set of channels, topics hashed onto them) would
// cost fewer SUBSCRIBEs but deliver every message of a shard to every
// process listening to any topic of it, to be filtered in JS; with topics
// that come and go at the rate of WebSocket subscriptions (first/last
// subscriber only), the channel per topic wins (docs/websocket.md).
//
// Faults: a publish while the publishing client is not ready, or with
// more than maxPending publishes unanswered, is dropped and counted (the
// client's offline queue would otherwise grow without bound while Redis is
// away); every time the subscriber client becomes ready again the topics
// are subscribed again (ioredis' autoResubscribe does it too; doing it
// here keeps it true when that is off).

const { codedTypeError } = require('../../common/errors');

function isIoredis(c) {
  return c != null && typeof c.publish === 'function' && typeof c.subscribe === 'function' &&
    typeof c.on === 'function' && typeof c.status === 'string';
}

class RedisAdapter {
  // options: pubClient, subClient (ioredis, subClient not used for anything
  // else that subscribes under the same prefix), prefix (default
  // 'sluice#'; one per WebSocketServer sharing the clients), maxPending
  // (publishes awaiting Redis' answer before more are dropped; 10000).
  constructor(options = {}) {
    const { pubClient, subClient } = options;
    if (!isIoredis(pubClient) || !isIoredis(subClient) || pubClient === subClient) {
      throw codedTypeError('ERR_SLUICE_PUBSUB_CLIENT',
        'redisAdapter needs { pubClient, subClient }: two ioredis clients (e.g. client and client.duplicate())');
    }
    this._pub = pubClient;
    this._sub = subClient;
    this._prefix = Buffer.from(options.prefix === undefined ? 'sluice#' : String(options.prefix));
    this._maxPending = options.maxPending || 10000;
    this._pending = 0;
    this._sink = null;
    this._closed = false;
    this._onMessage = (channel, message) => {
      const p = this._prefix;
      if (channel.length < p.length || channel.compare(p, 0, p.length, 0, p.length) !== 0) return;
      this._sink.deliver(channel.toString('utf8', p.length), message);
    };
    this._onReady = () => {
      for (const t of this._sink.topics()) this._call('subscribe', t);
    };
    // A SUBSCRIBE that fails (Redis away) is made again on 'ready'; an
    // UNSUBSCRIBE that fails leaves a channel whose messages find no local
    // subscriber. Neither is worth an event per topic.
    this._ignore = () => {};
    // Publishes of one loop turn, sent as one pipeline (one write to
    // Redis, which then writes them to each subscriber process together:
    // one fan-out turn there for all of them): [channel, packet, ...].
    this._batch = [];
    this._flushing = false;
    this._flush = () => this._flushBatch();
  }

  _channel(topic) {
    return Buffer.concat([this._prefix, Buffer.from(topic)]);
  }

  _call(method, topic) {
    this._sub[method](this._channel(topic)).catch(this._ignore);
  }

  attach(sink) {
    this._sink = sink;
    this._sub.on('messageBuffer', this._onMessage);
    this._sub.on('ready', this._onReady);
    // The clients' own 'error' events (every failed reconnect) stay the
    // app's: what the bus loses is reported as drops.
  }

  // Only while the subscriber client is ready: a SUBSCRIBE queued before
  // it is (ioredis' offline queue) puts it in subscriber mode ahead of its
  // own ready check, which then fails; 'ready' subscribes every topic
  // listened to by then anyway.
  subscribe(topic) {
    if (this._sub.status === 'ready') this._call('subscribe', topic);
  }

  unsubscribe(topic) {
    if (this._sub.status === 'ready') this._call('unsubscribe', topic);
  }

  publish(topic, packet) {
    if (this._pub.status !== 'ready') {
      this._sink.dropped(1, `Redis not connected (${this._pub.status})`);
      return;
    }
    if (this._pending + this._batch.length / 2 >= this._maxPending) {
      this._sink.dropped(1, `${this._pending} publishes await Redis`);
      return;
    }
    this._batch.push(this._channel(topic), packet);
    if (!this._flushing) {
      this._flushing = true;
      setImmediate(this._flush);
    }
  }

  _flushBatch() {
    this._flushing = false;
    const b = this._batch;
    this._batch = [];
    const n = b.length / 2;
    if (n === 0 || this._closed) return;
    if (this._pub.status !== 'ready') {
      this._sink.dropped(n, `Redis not connected (${this._pub.status})`);
      return;
    }
    this._pending += n;
    const p = this._pub.pipeline();
    for (let i = 0; i < b.length; i += 2) p.publish(b[i], b[i + 1]);
    p.exec((err, results) => {
      this._pending -= n;
      let failed = err ? n : 0;
      if (!err && results) for (const r of results) if (r[0]) failed++;
      if (failed > 0) this._sink.dropped(failed, `Redis did not take it: ${(err || results.find((r) => r[0])[0]).message}`);
    });
  }

  close() {
    if (this._closed || this._sink === null) return;
    this._closed = true;
    this._sub.removeListener('messageBuffer', this._onMessage);
    this._sub.removeListener('ready', this._onReady);
    if (this._sub.status === 'ready') {
      for (const t of this._sink.topics()) this._sub.unsubscribe(this._channel(t)).catch(() => {});
    }
  }
}

module.exports = { RedisAdapter };
