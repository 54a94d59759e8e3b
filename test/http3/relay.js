'use strict';

// A UDP relay between a test's QUIC client and the server (node:dgram): it
// may drop a seeded share of datagrams, reorder some, or never deliver the
// server's replies (a client address that is never validated: a flood of
// handshakes that never complete). Used by loss.test.js and limits.test.js.

const dgram = require('node:dgram');
const common = require('../common');

// xorshift32: deterministic drops and reorders for one seed.
function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x / 0x100000000;
  };
}

// A relay on 127.0.0.1 forwarding one client's datagrams to `target` and
// the replies back. opts.drop: share dropped; opts.reorder: share held back
// until the next datagram in the same direction; opts.blackholeDown: the
// server's datagrams never reach the client (an address that is never
// validated). Counts datagrams and bytes each way. rebind() moves the
// server side to a new port (a NAT rebinding).
async function startRelay(target, opts = {}) {
  const rand = rng(opts.seed || 12345);
  const front = dgram.createSocket('udp4');
  let back = dgram.createSocket('udp4');
  const stats = { up: 0, down: 0, upBytes: 0, downBytes: 0, dropped: 0, reordered: 0 };
  let client = null;
  const held = { up: null, down: null };
  const send = (sock, buf, port) => sock.send(buf, port, '127.0.0.1');
  function pass(dir, buf, sock, port) {
    stats[dir]++;
    stats[`${dir}Bytes`] += buf.length;
    if (dir === 'down' && opts.blackholeDown) return;
    if (rand() < (opts.drop || 0)) { stats.dropped++; return; }
    if (held[dir] === null && rand() < (opts.reorder || 0)) {
      held[dir] = buf;
      stats.reordered++;
      return;
    }
    send(sock, buf, port);
    if (held[dir] !== null) {
      send(sock, held[dir], port);
      held[dir] = null;
    }
  }
  front.on('message', (buf, rinfo) => {
    client = rinfo.port;
    pass('up', buf, back, target);  // the socket of the moment (rebind)
  });
  const fromServer = (buf) => {
    if (client !== null) pass('down', buf, front, client);
  };
  back.on('message', fromServer);
  await Promise.all([front, back].map((s) => new Promise((resolve) => s.bind(0, '127.0.0.1', resolve))));
  const relay = {
    port: front.address().port,
    backPort: back.address().port,  // the client's port as the server sees it
    stats,
    close: () => { front.close(); back.close(); },
    // A NAT rebinding: the client's datagrams leave from a new port from
    // now on; replies to the old one are lost with its socket.
    async rebind() {
      const fresh = dgram.createSocket('udp4');
      fresh.on('message', fromServer);
      await new Promise((resolve) => fresh.bind(0, '127.0.0.1', resolve));
      back.close();
      back = fresh;
      relay.backPort = fresh.address().port;
      return relay.backPort;
    },
  };
  return relay;
}

// For a mocha suite (call it inside describe): the clients and relays a
// test pushes here are destroyed and closed after it, then
// common.cleanup() runs.
function relayFixtures() {
  const clients = [];
  const relays = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.destroy();
    for (const r of relays.splice(0)) r.close();
    await common.cleanup();
  });
  return { clients, relays };
}

module.exports = { startRelay, relayFixtures, rng };
