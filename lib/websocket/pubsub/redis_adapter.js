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
    this._published = () => { this._pending--; };
    this._failed = (err) => {
      this._pending--;
      this._dropped(`Redis did not take it: ${err.message}`);
    };
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
      this._dropped(`Redis not connected (${this._pub.status})`);
      return;
    }
    if (this._pending >= this._maxPending) {
      this._dropped(`${this._pending} publishes await Redis`);
      return;
    }
    this._pending++;
    this._pub.publish(this._channel(topic), packet).then(this._published, this._failed);
  }

  _dropped(reason) {
    this._sink.dropped(1, reason);
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
