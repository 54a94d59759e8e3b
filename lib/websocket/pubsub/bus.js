'use strict';

// The pub/sub bus under one WebSocketServer: carries its publishes to the
// other processes (adapters: machine_adapter.js for the processes of one
// machine, redis_adapter.js between machines) and hands theirs to the local
// native hub, which fans them out as it fans out a local publish (framed
// and compressed once, no JS per subscriber). docs/websocket.md "The bus".
//
// Once per process, never per subscriber: a publish is encoded once and
// given to the adapter once; a message from the bus is one call into the
// hub. The hub tells the bus (once per loop turn, NativeWsHub.watchTopics)
// which topics gained their first or lost their last local subscriber, and
// the bus listens to exactly those topics on the adapter.
//
// At most once: a message the adapter cannot take now (engine down, a peer
// too slow) is dropped and counted, never queued; 'error' events on the
// WebSocketServer say how many (throttled, see DROP_REPORT_MS).

const crypto = require('crypto');
const { codedError } = require('../../common/errors');

// A packet: [flags][origin id, 8 bytes][payload]. The origin lets an
// engine that echoes a process's own publishes back (Redis delivers to
// every subscriber of the channel, the publisher's process included) skip
// what the local hub already delivered.
const FLAG_BINARY = 1;
const FLAG_COMPRESS = 2;
const ORIGIN_LEN = 8;
const HEADER_LEN = 1 + ORIGIN_LEN;

// Drops are reported at most this often (one 'error' with the count since
// the last report): an engine down under a stream of publishes would
// otherwise raise one event per message.
const DROP_REPORT_MS = 1000;

class Bus {
  // wss: the WebSocketServer ('error' events), hub: its NativeWsHub,
  // adapter: see docs/websocket.md "Adapters".
  constructor(wss, hub, adapter, opcodes) {
    this._wss = wss;
    this._hub = hub;
    this._adapter = adapter;
    this._text = opcodes.text;
    this._binary = opcodes.binary;
    this.origin = crypto.randomBytes(ORIGIN_LEN);
    this._topics = new Set();  // topics listened to on the adapter
    this._closed = false;
    this._started = false;
    this._stats = { published: 0, received: 0, dropped: 0 };
    this._unreported = 0;
    this._reportTimer = null;
    this._lastReport = 0;
    this._lastReason = null;
  }

  // key: what names the group of processes sharing topics (the machine
  // adapter's rendezvous: port and path). Called once, when known.
  start(key) {
    if (this._started || this._closed) return;
    this._started = true;
    this._adapter.attach({
      key,
      deliver: (topic, packet) => this._deliver(topic, packet),
      dropped: (n, reason) => this.dropped(n, reason),
      error: (err) => this._emitError(err),
      topics: () => this._topics,
    });
    this._hub.watchTopics((changes) => this._onTopics(changes));
  }

  // From the hub's topic watch: [topic, hasSubscriber, ...].
  _onTopics(changes) {
    if (this._closed) return;
    for (let i = 0; i < changes.length; i += 2) {
      const topic = changes[i];
      if (changes[i + 1]) {
        if (!this._topics.has(topic)) {
          this._topics.add(topic);
          this._adapter.subscribe(topic);
        }
      } else if (this._topics.delete(topic)) {
        this._adapter.unsubscribe(topic);
      }
    }
  }

  // A local publish (wss.publish or ws.publish, already delivered here),
  // for the other processes.
  publish(topic, data, opcode, compress) {
    if (!this._started || this._closed) return;
    // As the hub and every peer name it: its UTF-8 (a lone surrogate is
    // U+FFFD there).
    if (!topic.isWellFormed()) topic = topic.toWellFormed();
    if (this._adapter.wants !== undefined && !this._adapter.wants(topic)) return;
    const len = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    const packet = Buffer.allocUnsafe(HEADER_LEN + len);
    packet[0] = (opcode === this._binary ? FLAG_BINARY : 0) | (compress ? FLAG_COMPRESS : 0);
    this.origin.copy(packet, 1);
    if (typeof data === 'string') packet.write(data, HEADER_LEN);
    else data.copy(packet, HEADER_LEN);
    this._stats.published++;
    this._adapter.publish(topic, packet);
  }

  // A packet from the bus: one call into the native hub.
  _deliver(topic, packet) {
    if (this._closed || packet.length < HEADER_LEN) return;
    if (packet.compare(this.origin, 0, ORIGIN_LEN, 1, HEADER_LEN) === 0) return;
    this._stats.received++;
    const flags = packet[0];
    this._hub.publish(topic, packet.subarray(HEADER_LEN),
      flags & FLAG_BINARY ? this._binary : this._text, (flags & FLAG_COMPRESS) !== 0);
  }

  // Messages the adapter could not carry: counted, reported throttled.
  dropped(n, reason) {
    if (this._closed) return;
    this._stats.dropped += n;
    this._unreported += n;
    this._lastReason = reason;
    if (this._reportTimer !== null) return;
    const wait = Math.max(0, this._lastReport + DROP_REPORT_MS - Date.now());
    this._reportTimer = setTimeout(() => this._reportDrops(), wait);
    this._reportTimer.unref();
  }

  _reportDrops() {
    this._reportTimer = null;
    this._lastReport = Date.now();
    const n = this._unreported;
    this._unreported = 0;
    if (n === 0) return;
    const err = codedError('ERR_SLUICE_PUBSUB_DROPPED',
      `pub/sub: ${n} message(s) for other processes dropped (${this._lastReason})`);
    err.dropped = n;
    this._emitError(err);
  }

  // 'error' on the WebSocketServer when someone listens: a bus fault must
  // not crash an app that never expected one (local delivery goes on).
  _emitError(err) {
    if (this._closed) return;
    if (this._wss.listenerCount('error') > 0) this._wss.emit('error', err);
  }

  stats() {
    return { ...this._stats, topics: this._topics.size };
  }

  close() {
    if (this._closed) return;
    this._closed = true;
    if (this._reportTimer !== null) clearTimeout(this._reportTimer);
    this._hub.watchTopics(null);
    if (this._started) this._adapter.close();
  }
}

module.exports = { Bus, HEADER_LEN };
