'use strict';

// The endpoint sends runs of datagrams to one client as one GSO send
// (UDP_SEGMENT, QuicEndpoint::SendBatch) on Linux: bodies arrive whole at
// our client and at gtlsclient, and the endpoint counts the GSO sends it
// made (a 2 MiB body is hundreds of full-size datagrams, so several runs).
// [sluice-only]

const crypto = require('node:crypto');
const common = require('../common');
const { assert } = common;
const { h3, haveClient, startH3Server, gtls } = require('./h3common');
const { h3Clients } = require('./quic_client');

const run = common.isSluice && h3 && process.platform === 'linux' ? describe : describe.skip;
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

run('HTTP/3 sends with GSO [sluice-only]', function () {
  this.timeout(30000);
  const { connect } = h3Clients();
  const body = crypto.randomBytes(2 * 1024 * 1024 + 17);

  it('a 2 MiB body arrives whole (our client, gtlsclient) through GSO sends', async function () {
    const { server, port } = await startH3Server({}, (req, res) => res.end(body));
    const before = server._http3.gsoSends();
    const c = await connect(port);
    const r = await common.withTimeout(c.request('GET', '/big', [], null, port), 20000, 'GET /big');
    assert.strictEqual(r.status, 200);
    assert.strictEqual(sha(r.body), sha(body));
    const after = server._http3.gsoSends();
    assert.ok(after > before, `GSO sends: ${before} -> ${after}`);
    if (haveClient) {
      const g = await gtls(port, ['/big']);
      assert.strictEqual(g.code, 0, g.log.slice(-2000));
      assert.strictEqual(sha(g.responses.get('/big').body), sha(body));
      assert.ok(server._http3.gsoSends() > after);
    }
  });

  it('http3.gso false: the same body, every datagram through OpenSSL\'s own BIO', async function () {
    const { server, port } = await startH3Server({ http3: { gso: false } }, (req, res) => res.end(body));
    const c = await connect(port);
    const r = await common.withTimeout(c.request('GET', '/big', [], null, port), 20000, 'GET /big');
    assert.strictEqual(sha(r.body), sha(body));
    assert.strictEqual(server._http3.gsoSends(), 0);
  });
});
