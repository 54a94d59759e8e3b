'use strict';

// The bus among the processes of one machine that serve the same port
// (cluster workers, reusePort processes, worker threads): a mesh of
// Unix-domain sockets, no broker and no primary involved.
//
// Rendezvous: a directory per uid and port (mode 0700) under the temp
// directory; each member listens on a socket file of its own there and,
// once listening, connects to every file it finds. So every pair of members
// gets a link (both may connect at once: the link the smaller id opened is
// kept, both ends decide the same). A file whose owner died refuses the
// connection and is removed by whoever finds it.
//
// Why a mesh of sockets and not node's cluster IPC (docs/websocket.md has
// the measurement, benchmark/websocket/_bus_transport.js): IPC goes through
// the primary (two hops and JSON or structured-clone serialization per
// message, a relay to install in an app's primary code, nothing for
// reusePort processes or worker threads), while a socket write here is
// one copy of bytes per interested peer; a dying member takes only its own
// links with it.
//
// Interest: each member tells its peers the topics it has local
// subscribers for (SUB/UNSUB), so a publish is written only to the peers
// that want it, once per peer.
//
// Frames on a link: [u32 length of the rest][u8 type][body].
//   HELLO  body = the sender's id (its socket's file name)
//   SUB    body = topic (UTF-8)
//   UNSUB  body = topic
//   MSG    body = [u32 topic length][topic][packet]

const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { threadId } = require('worker_threads');
const { codedError } = require('../../common/errors');

const HELLO = 0;
const SUB = 1;
const UNSUB = 2;
const MSG = 3;

// A peer writing more than this in one frame is broken: the link closes.
const MAX_FRAME = 2 ** 31 - 1;

// Every socket file this process made, removed at exit even if nobody
// closed its server (a process that exits without closing leaves no file).
const ownFiles = new Set();
let exitHookInstalled = false;
function trackFile(file) {
  ownFiles.add(file);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const f of ownFiles) {
      try { fs.unlinkSync(f); } catch {}
    }
  });
}

// One frame in one Buffer: one socket write per frame and peer.
function frame(type, body) {
  const f = Buffer.allocUnsafe(5 + body.length);
  f.writeUInt32BE(1 + body.length, 0);
  f[4] = type;
  body.copy(f, 5);
  return f;
}

// MSG: [u32 topic length][topic][packet].
function msgFrame(topic, packet) {
  const tlen = Buffer.byteLength(topic);
  const f = Buffer.allocUnsafe(9 + tlen + packet.length);
  f.writeUInt32BE(5 + tlen + packet.length, 0);
  f[4] = MSG;
  f.writeUInt32BE(tlen, 5);
  f.write(topic, 9);
  packet.copy(f, 9 + tlen);
  return f;
}

// One connection to one peer (either direction).
class Link {
  constructor(adapter, socket, outbound) {
    this.adapter = adapter;
    this.socket = socket;
    this.outbound = outbound;
    this.peer = null;      // the peer's id, after its HELLO
    this.topics = new Set();  // the peer's subscribed topics
    this.corked = false;
    this._chunks = [];
    this._have = 0;
    this._need = 0;  // bytes of the frame being read (0: not known yet)
    socket.unref();
    socket.setNoDelay?.(true);
    socket.on('data', (chunk) => this._onData(chunk));
    socket.on('error', () => {});
    socket.on('close', () => adapter._linkClosed(this));
  }

  write(type, body) {
    this.send(frame(type, body));
  }

  // Corked until the end of the loop turn (setImmediate, not nextTick:
  // every message event of a turn is a tick of its own): what a turn
  // publishes leaves in one writev, arrives in one read and is fanned out
  // in one turn over there, so each subscriber's socket gets one write
  // for all of it, as in a single process.
  send(f) {
    this._cork();
    this.socket.write(f);
  }

  _cork() {
    if (this.corked) return;
    this.corked = true;
    this.socket.cork();
    setImmediate(() => {
      this.corked = false;
      this.socket.uncork();
    });
  }

  // Frames out of the byte stream. The chunks of a frame still arriving
  // are only listed (joined once it is whole: a large message in many
  // reads is copied once, not once per read).
  _onData(chunk) {
    this._chunks.push(chunk);
    this._have += chunk.length;
    while (this._have >= 4) {
      if (this._need === 0) {
        let first = this._chunks[0];
        if (first.length < 4) {
          first = Buffer.concat(this._chunks, this._have);
          this._chunks = [first];
        }
        const len = first.readUInt32BE(0);
        if (len < 1 || len > MAX_FRAME) {
          this.socket.destroy();
          return;
        }
        this._need = 4 + len;
      }
      if (this._have < this._need) return;
      let buf = this._chunks.length === 1 ? this._chunks[0] : Buffer.concat(this._chunks, this._have);
      const type = buf[4];
      const body = buf.subarray(5, this._need);
      buf = buf.subarray(this._need);
      this._need = 0;
      this._chunks = buf.length > 0 ? [buf] : [];
      this._have = buf.length;
      this.adapter._onFrame(this, type, body);
      if (this.socket.destroyed) return;
    }
  }
}

class MachineAdapter {
  // options.dir: the rendezvous directory (default: a folder per uid and
  // port under os.tmpdir()); options.maxBuffered: bytes queued on a link
  // beyond which messages to that peer are dropped (default 8 MiB).
  constructor(options = {}) {
    this._dir = options.dir || null;
    this._maxBuffered = options.maxBuffered || 8 * 1024 * 1024;
    this._sink = null;
    this._server = null;
    this._file = null;
    this._id = null;
    this._peers = new Map();  // peer id -> the Link kept for it
    this._links = new Set();
    this._closed = false;
  }

  attach(sink) {
    this._sink = sink;
    const key = sink.key;
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    const hash = (v) => crypto.createHash('sha1').update(v).digest('hex').slice(0, 12);
    // A server on a Unix socket has a path for a port: its hash names it.
    const name = (typeof key.port === 'string' ? `unix-${hash(key.port)}` : `${key.port}`) +
      (key.path ? `-${hash(key.path)}` : '');
    this._ownDir = !this._dir;  // ours to check the parent of and remove
    this._dir = this._dir || path.join(os.tmpdir(), `sluice-bus-${uid}`, name);
    this._id = `${process.pid}-${threadId}-${crypto.randomBytes(4).toString('hex')}`;
    this._file = path.join(this._dir, this._id + '.sock');
    const server = net.createServer((socket) => this._addLink(socket, false));
    this._server = server;
    let retries = 3;
    server.on('error', (err) => {
      // The last member of the group removed the (empty) directory between
      // our mkdir and our listen: make it again.
      if (err.code === 'ENOENT' && retries-- > 0 && !this._closed) this._listen();
      else sink.error(err);
    });
    server.unref();
    this._listen();
  }

  // Makes the directory (mode 0700; one that someone else owns or can
  // write to is refused: its sockets could be anyone's) and listens in it.
  _listen() {
    const uid = typeof process.getuid === 'function' ? process.getuid() : null;
    try {
      fs.mkdirSync(this._dir, { recursive: true, mode: 0o700 });
      for (const d of this._ownDir ? [path.dirname(this._dir), this._dir] : [this._dir]) {
        const st = fs.statSync(d);
        if ((uid !== null && st.uid !== uid) || (st.mode & 0o022) !== 0) {
          throw codedError('ERR_SLUICE_PUBSUB_DIR', `pub/sub: ${d} is not this user's alone`);
        }
      }
    } catch (err) {
      this._sink.error(err);
      return;
    }
    this._server.listen(this._file, () => {
      if (this._closed) return;
      trackFile(this._file);
      this._discover();
    });
  }

  // Connects to every member listed now (the ones that come later connect
  // to us).
  _discover() {
    let names;
    try {
      names = fs.readdirSync(this._dir);
    } catch (err) {
      this._sink.error(err);
      return;
    }
    for (const n of names) {
      if (!n.endsWith('.sock') || n === this._id + '.sock') continue;
      const file = path.join(this._dir, n);
      const socket = net.connect(file);
      socket.once('error', (err) => {
        // Its owner is gone: the file is stale.
        if (err.code === 'ECONNREFUSED') fs.unlink(file, () => {});
      });
      socket.once('connect', () => this._addLink(socket, true));
      socket.unref();
    }
  }

  _addLink(socket, outbound) {
    if (this._closed) {
      socket.destroy();
      return;
    }
    const link = new Link(this, socket, outbound);
    this._links.add(link);
    link.write(HELLO, Buffer.from(this._id));
    for (const t of this._sink.topics()) link.write(SUB, Buffer.from(t));
  }

  _onFrame(link, type, body) {
    if (type === HELLO) {
      const peer = body.toString();
      link.peer = peer;
      const kept = this._peers.get(peer);
      if (kept === undefined) {
        this._peers.set(peer, link);
        return;
      }
      // Two links to one peer: keep the one the smaller id opened.
      const opener = (l) => (l.outbound ? this._id : peer);
      const winner = opener(link) < opener(kept) ? link : kept;
      const loser = winner === link ? kept : link;
      this._peers.set(peer, winner);
      loser.peer = null;
      loser.socket.destroy();
      return;
    }
    if (link.peer === null) return;
    if (type === SUB) {
      link.topics.add(body.toString());
    } else if (type === UNSUB) {
      link.topics.delete(body.toString());
    } else if (type === MSG && body.length >= 4) {
      const tlen = body.readUInt32BE(0);
      if (4 + tlen > body.length) return;
      this._sink.deliver(body.toString('utf8', 4, 4 + tlen), body.subarray(4 + tlen));
    }
  }

  _linkClosed(link) {
    this._links.delete(link);
    if (link.peer !== null && this._peers.get(link.peer) === link) this._peers.delete(link.peer);
  }

  subscribe(topic) {
    const b = Buffer.from(topic);
    for (const l of this._links) l.write(SUB, b);
  }

  unsubscribe(topic) {
    const b = Buffer.from(topic);
    for (const l of this._links) l.write(UNSUB, b);
  }

  // Whether any peer listens to `topic` (the bus skips encoding if not).
  wants(topic) {
    for (const l of this._peers.values()) if (l.topics.has(topic)) return true;
    return false;
  }

  publish(topic, packet) {
    let f = null;
    let dropped = 0;
    for (const l of this._peers.values()) {
      if (!l.topics.has(topic)) continue;
      if (l.socket.writableLength > this._maxBuffered) {
        dropped++;
        continue;
      }
      if (f === null) f = msgFrame(topic, packet);
      l.send(f);
    }
    if (dropped > 0) this._sink.dropped(dropped, 'a sibling process is not reading');
  }

  // Peers linked now (tests, stats).
  peers() { return this._peers.size; }

  close() {
    if (this._closed) return;
    this._closed = true;
    for (const l of this._links) l.socket.destroy();
    this._links.clear();
    this._peers.clear();
    if (this._server !== null) {
      this._server.close();
      if (this._file !== null) {
        ownFiles.delete(this._file);
        try { fs.unlinkSync(this._file); } catch {}
        // The last one out removes the directory (not if others are in it).
        if (this._ownDir) try { fs.rmdirSync(this._dir); } catch {}
      }
    }
  }
}

module.exports = { MachineAdapter };
