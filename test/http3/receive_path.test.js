'use strict';

// The endpoint's own receive path (QuicEndpoint::RecvBatch): recvmmsg on
// the UDP socket with UDP_GRO on, so the kernel may hand over a run of
// datagrams from one sender as one read, which the endpoint cuts back into
// its datagrams by the segment size the read's control message gives.
// A sender that coalesces (UDP_SEGMENT, as a GSO-sending QUIC client
// does) is python's socket.sendmsg here: node's dgram cannot. Each burst
// is datagrams of an unknown QUIC version, which OpenSSL answers one by
// one with a Version Negotiation packet (RFC 9000 §6): as many answers as
// datagrams means every one was cut out and handed over whole, the
// bursts longer than OpenSSL takes per read included (it reads 32 at a
// time; the rest wait in the endpoint). [sluice-only]

const os = require('node:os');
const { execFile } = require('node:child_process');
const common = require('../common');
const { assert } = common;
const { h3, sluice } = require('./h3common');
const { fixtures } = require('../tls/tls_common');
const { h3Clients } = require('./quic_client');

// python3 and a kernel with UDP_SEGMENT (4.18) and UDP_GRO (5.0): a
// socket takes both options.
function haveGro() {
  try {
    require('node:child_process').execFileSync('python3', ['-c',
      'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setsockopt(17, 103, 1200); s.setsockopt(17, 104, 1)'],
    { stdio: 'ignore', timeout: 10000 });
    return true;
  } catch {
    return false;
  }
}
const haveIPv6 = Object.values(os.networkInterfaces()).flat().some((i) => i.family === 'IPv6' && i.address === '::1');
const run = common.isSluice && h3 && process.platform === 'linux' && haveGro() ? describe : describe.skip;

// Sends `n` datagrams to host:port as one GSO send, every one `segment`
// bytes but the last (`last` bytes: a GSO run may end short), then
// counts the Version Negotiation answers (version 0) for 2 s at most;
// prints "<answers> <answers naming a DCID we sent as their SCID>".
const BURST = `
import os, socket, struct, sys
host, port, n, seg, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
fam = socket.AF_INET6 if ':' in host else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.bind((host, 0))
ids, pkts = set(), []
for i in range(n):
    dcid = os.urandom(8)
    ids.add(dcid)
    p = bytes([0xc0]) + bytes.fromhex('1a2a3a4a') + bytes([8]) + dcid + bytes([8]) + os.urandom(8)
    pkts.append(p + bytes((last if i == n - 1 else seg) - len(p)))
s.sendmsg([b''.join(pkts)], [(socket.SOL_UDP, 103, struct.pack('H', seg))], 0, (host, port))
s.settimeout(2)
got = matched = 0
try:
    while got < n:
        d = s.recv(65536)
        if len(d) >= 7 and d[0] & 0x80 and d[1:5] == bytes(4):
            got += 1
            scid_at = 6 + d[5]
            if d[scid_at + 1:scid_at + 1 + d[scid_at]] in ids:
                matched += 1
except socket.timeout:
    pass
print(got, matched)
`;

function burst(host, port, n, segment, last) {
  return new Promise((resolve, reject) => {
    execFile('python3', ['-c', BURST, host, String(port), String(n), String(segment), String(last)], { timeout: 10000 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${err.message}\n${stderr}`));
        const [answers, matched] = stdout.trim().split(' ').map(Number);
        resolve({ answers, matched });
      });
  });
}

run('HTTP/3 receive path: recvmmsg with UDP_GRO [sluice-only]', function () {
  this.timeout(20000);
  const { connect } = h3Clients();

  // A server on `host`, a burst from `sendHost`, then a real request.
  async function check(host, sendHost, n, segment, last = segment) {
    const { localhost } = fixtures();
    const server = sluice.createSecureServer({ key: localhost.key, cert: localhost.cert, http3: true },
      (req, res) => res.end('ok'));
    common.trackServer(server);
    await new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, resolve);
    });
    const port = server.http3Address().port;
    const before = server._http3.groReads();
    const r = await burst(sendHost, port, n, segment, last);
    assert.strictEqual(r.answers, n, `Version Negotiation answers to a burst of ${n}`);
    assert.strictEqual(r.matched, n, 'each answer names a datagram of the burst');
    assert.ok(server._http3.groReads() > before, 'the burst came as one coalesced read');
    const c = await connect(port, { host: sendHost });
    const res = await common.withTimeout(c.request('GET', '/', [], null, port), 10000, 'GET /');
    assert.strictEqual(res.status, 200);
    assert.strictEqual(res.body.toString(), 'ok');
  }

  it('a burst of 10 coalesced datagrams: each one answered', async function () {
    await check('127.0.0.1', '127.0.0.1', 10, 1200);
  });

  it('a burst of 50 (more than OpenSSL reads at once) with a short last datagram: each one answered', async function () {
    // OpenSSL answers only datagrams of at least 1200 bytes (RFC 9000
    // §14.1), so the short last one is 1210.
    await check('127.0.0.1', '127.0.0.1', 50, 1250, 1210);
  });

  (haveIPv6 ? it : it.skip)('IPv6 (::1) and an IPv4 client of a dual-stack (::) listener', async function () {
    await check('::1', '::1', 20, 1200);
    await check('::', '127.0.0.1', 20, 1200);
  });
});
