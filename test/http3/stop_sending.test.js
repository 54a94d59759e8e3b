'use strict';

// A client that gives a request up (STOP_SENDING on its stream, as chromium
// sends when a page cancels a fetch or navigates away) ends the request on
// the server at once, whatever the response is doing: not started yet,
// head sent and the body pending (a long poll), or blocked. Before, the
// server only noticed when it next wrote, so a response waiting for data,
// or for 'drain' on a stream the client stopped reading, stayed open until
// the connection died (and a file body kept its descriptor). The client
// here is the project's (node's OpenSSL): freeing a stream object with an
// unfinished receive part sends STOP_SENDING. [sluice-only]

const common = require('../common');
const { assert } = common;
const { h3, startH3Server } = require('./h3common');
const { h3Clients } = require('./quic_client');

const run = common.isSluice && h3 ? describe : describe.skip;

// Resolves { rstCode, aborted } when the server's stream closes.
function closeOf(stream) {
  return new Promise((resolve) => stream.on('close', () => resolve({ rstCode: stream.rstCode, aborted: stream.aborted })));
}

run('HTTP/3 STOP_SENDING from the client [sluice-only]', function () {
  this.timeout(30000);
  const { connect } = h3Clients();

  for (const when of ['before the head', 'after the head (a long poll)']) {
    it(`stream API: STOP_SENDING ${when} closes the stream (NGHTTP2_CANCEL); the connection serves on`, async function () {
      const opened = [];
      const { server, port } = await startH3Server();
      server.on('stream', (stream, headers) => {
        if (headers[':path'] === '/next') return stream.respond({ ':status': 200 }, { endStream: true });
        if (when !== 'before the head') stream.respond({ ':status': 200 });
        stream.on('error', () => {});
        opened.push(closeOf(stream));
        return undefined;
      });
      const c = await connect(port);
      const p = c.request('GET', '/poll', [], null, port);
      await common.withTimeout((async () => { while (opened.length === 0) await common.sleep(5); })(), 10000, 'the request');
      if (when !== 'before the head') {
        // The head reached the client before it gives up.
        await common.withTimeout((async () => { while ((c.streams.get(p.id).chunks.length) === 0) await common.sleep(5); })(), 10000, 'the head');
      }
      c.abandon(p.id);
      assert.strictEqual((await p).abandoned, true);
      const closed = await common.withTimeout(opened[0], 10000, 'the server stream\'s close after STOP_SENDING');
      assert.strictEqual(closed.rstCode, 8, `rstCode ${closed.rstCode} (NGHTTP2_CANCEL)`);
      const next = await common.withTimeout(c.request('GET', '/next', [], null, port), 10000, 'the next request');
      assert.strictEqual(next.status, 200);
    });
  }

  it('compat API: a response waiting for data gets \'close\', unfinished', async function () {
    let closed;
    const { port } = await startH3Server({}, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part; the rest never comes');
      closed = new Promise((resolve) => {
        res.on('close', () => resolve({ finished: res.writableFinished, destroyed: res.destroyed }));
      });
    });
    const c = await connect(port);
    const p = c.request('GET', '/poll', [], null, port);
    await common.withTimeout((async () => {
      while (!closed || Buffer.concat(c.streams.get(p.id).chunks).indexOf('first part') < 0) await common.sleep(5);
    })(), 10000, 'the first part');
    c.abandon(p.id);
    const r = await common.withTimeout(closed, 10000, 'res \'close\' after STOP_SENDING');
    assert.deepStrictEqual(r, { finished: false, destroyed: true });
  });
});
