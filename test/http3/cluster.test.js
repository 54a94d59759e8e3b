'use strict';

// docs/deployment.md's cluster recipe with http3: true: every worker of a
// node cluster binds its own UDP socket on the shared port (SO_REUSEPORT,
// as its TCP listener), and every one answers HTTP/3. Before, the second
// worker's UDP bind failed with EADDRINUSE. The kernel picks the worker
// by a hash of the datagram's 4-tuple, so new client ports (each client
// binds its own) reach both. [sluice-only]; skipped where node's OpenSSL
// has no QUIC server.

const dgram = require('node:dgram');
const https = require('node:https');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, gtls } = require('./h3common');
const { h3Clients } = require('./quic_client');
const { fixtures } = require('../tls/tls_common');
const { startCluster } = require('../cluster/cluster_child');

const run = common.isSluice && h3 ? describe : describe.skip;

// A port number free for TCP and for UDP on 127.0.0.1 right now: the
// workers bind both, and an ephemeral UDP socket (a client's, this
// process's or another's) may hold a number TCP has free.
async function freeTcpUdpPort() {
  for (;;) {
    const port = await common.freePort();
    const s = dgram.createSocket('udp4');
    const ok = await new Promise((resolve) => {
      s.once('error', () => resolve(false));
      s.bind(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) {
      await new Promise((resolve) => s.close(resolve));
      return port;
    }
    try { s.close(); } catch { /* never bound */ }
  }
}

run('HTTP/3 on every worker of a node cluster [sluice-only]', function () {
  this.timeout(60000);
  const { connect } = h3Clients();

  it('2 workers: both answer HTTP/3 on the shared port, over TCP too', async function () {
    const { localhost } = fixtures();
    const port = await freeTcpUdpPort();
    const c = await startCluster(port, 2, { SLUICE_TEST_H3_KEY: localhost.keyPath, SLUICE_TEST_H3_CERT: localhost.certPath });
    try {
      // Each client is a new UDP socket (a new source port): 40 of them
      // reach both workers unless the hash is badly skewed (2^-39).
      // Seen now and then in mocha on this loaded machine, never in 300
      // connections of the same clients from a script: a client that fails
      // before connecting (its own socket's error: OpenSSL's "network BIO
      // I/O error") or gets no answer in 3 s. Up to 2 are logged and
      // replaced; the workers' stderr stays empty then.
      const counts = {};
      let lost = 0;
      const t00 = Date.now();
      for (let i = 0; i < 40; i++) {
        let r;
        try {
          const cl = await common.withTimeout(connect(port), 3000, `connect ${i}`);
          r = await common.withTimeout(cl.request('GET', '/', [], null, port), 3000, `request ${i}`);
          cl.close();
        } catch (err) {
          // eslint-disable-next-line no-console
          console.log(`      client ${i} unanswered after ${Date.now() - t00} ms: ${err.message}`);
          if (++lost > 2) throw new Error(`${err.message}; the cluster's stderr: ${c.stderr}`);
          continue;
        }
        assert.strictEqual(r.status, 200);
        const pid = r.body.toString();
        counts[pid] = (counts[pid] || 0) + 1;
      }
      assert.strictEqual(Object.keys(counts).length, 2, `HTTP/3 answers came from ${JSON.stringify(counts)}`);
      // eslint-disable-next-line no-console
      console.log(`      HTTP/3 spread over 40 connections: ${Object.values(counts).join(' / ')}${lost ? ` (${lost} unanswered)` : ''}`);
      if (haveClient) {
        const { code, responses, log } = await gtls(port, ['/']);
        assert.strictEqual(code, 0, log.slice(-2000));
        assert.ok(Object.keys(counts).includes(responses.get('/').body.toString()));
      }
      // The TCP side of a worker advertises the UDP port it shares.
      const altSvc = await new Promise((resolve, reject) => {
        https.get({ host: '127.0.0.1', port, path: '/', ca: fixtures().ca, servername: 'localhost', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.headers['alt-svc']));
        }).on('error', reject);
      });
      assert.strictEqual(altSvc, `h3=":${port}"; ma=86400`);
      assert.strictEqual(c.stderr, '');
    } finally {
      await c.stop();
    }
  });
});
