'use strict';

// node's diagnostics channels for servers (docs/observability.md): the
// names, payloads and order node:http / node:http2 publish, per Node
// version as node publishes them. SLUICE_TEST_IMPL=node runs the same
// assertions against node's own servers.

const dc = require('node:diagnostics_channel');
const http = require('node:http');
const http2 = require('node:http2');
const common = require('../common');
const { startH2, connect, request } = require('../http2/h2common');

const { assert } = common;

const [major, minor] = process.versions.node.split('.').map(Number);
// From node's changelogs: response.created in 22.12 / 23.2; the HTTP/2
// server stream channels in 22.17 / 24.2, 'close' in 22.18 / 24.3.
const hasResponseCreated = major >= 23 || (major === 22 && minor >= 12);
const h2Since = (m22, m24) => (major === 22 ? minor >= m22 : major === 24 ? minor >= m24 : major >= 25);
const hasH2Channels = h2Since(17, 2);
const hasH2Close = h2Since(18, 3);

// Subscribes `fn` to each channel name for the current test.
const subscribed = [];
function subscribe(name, fn) {
  dc.subscribe(name, fn);
  subscribed.push([name, fn]);
}

describe(`diagnostics channels (${common.isNode ? 'node' : 'sluice'})`, () => {
  afterEach(() => {
    for (const [name, fn] of subscribed.splice(0)) dc.unsubscribe(name, fn);
  });
  afterEach(common.cleanup);

  describe('HTTP/1.1: http.server.*', () => {
    it('publishes created, start and finish with node\'s payloads, in node\'s order', async () => {
      const events = [];
      let seen;
      subscribe('http.server.response.created', (m) => events.push(['created', m]));
      subscribe('http.server.request.start', (m) => events.push(['start', m]));
      subscribe('http.server.response.finish', (m) => events.push(['finish', m]));
      const { server, port } = await common.startServer((req, res) => {
        seen = { req, res };
        events.push(['request']);
        res.on('finish', () => events.push(['finish listener']));
        res.end('ok');
      });
      const r = await common.httpRequest(port, { path: '/a?b=1' });
      assert.strictEqual(r.body.toString(), 'ok');
      await common.sleep(20);
      const names = events.map((e) => e[0]);
      assert.deepStrictEqual(names, [
        ...(hasResponseCreated ? ['created'] : []),
        'start', 'request', 'finish', 'finish listener',
      ]);
      const start = events.find((e) => e[0] === 'start')[1];
      assert.deepStrictEqual(Object.keys(start).sort(), ['request', 'response', 'server', 'socket']);
      assert.strictEqual(start.request, seen.req);
      assert.strictEqual(start.response, seen.res);
      assert.strictEqual(start.socket, seen.req.socket);
      assert.strictEqual(start.server, server);
      assert.strictEqual(start.request.url, '/a?b=1');
      const finish = events.find((e) => e[0] === 'finish')[1];
      assert.strictEqual(finish.request, seen.req);
      assert.strictEqual(finish.response, seen.res);
      assert.strictEqual(finish.socket, seen.req.socket);
      assert.strictEqual(finish.server, server);
      assert.strictEqual(finish.response.statusCode, 200);
      if (hasResponseCreated) {
        const created = events[0][1];
        assert.deepStrictEqual(Object.keys(created).sort(), ['request', 'response']);
        assert.strictEqual(created.request, seen.req);
        assert.strictEqual(created.response, seen.res);
      }
    });

    it('pipelined requests: one start and one finish each, in request order', async () => {
      const events = [];
      subscribe('http.server.request.start', (m) => events.push(`start ${m.request.url}`));
      subscribe('http.server.response.finish', (m) => events.push(`finish ${m.request.url}`));
      const { port } = await common.startServer((req, res) => res.end(req.url));
      const client = await common.rawConnect(port);
      client.write('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n' +
        'GET /3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
      await client.closedPromise;
      assert.strictEqual(common.parseResponses(client.data).responses.length, 3);
      assert.deepStrictEqual(events.filter((e) => e.startsWith('start')), ['start /1', 'start /2', 'start /3']);
      assert.deepStrictEqual(events.filter((e) => e.startsWith('finish')), ['finish /1', 'finish /2', 'finish /3']);
    });

    it('a start subscriber sees the request before the handler and may listen on it', async () => {
      const order = [];
      subscribe('http.server.request.start', ({ request, response }) => {
        order.push(`start ${request.method}`);
        response.on('finish', () => order.push(`finish ${response.statusCode}`));
      });
      const { port } = await common.startServer((req, res) => {
        order.push('handler');
        res.statusCode = 404;
        res.end();
      });
      const r = await common.httpRequest(port, { method: 'POST', body: 'x' });
      assert.strictEqual(r.statusCode, 404);
      await common.sleep(20);
      assert.deepStrictEqual(order, ['start POST', 'handler', 'finish 404']);
    });

    it('no subscriber: nothing published, the channel has none', async () => {
      assert.strictEqual(dc.channel('http.server.request.start').hasSubscribers, false);
      const { port } = await common.startServer((req, res) => res.end('ok'));
      const r = await common.httpRequest(port);
      assert.strictEqual(r.body.toString(), 'ok');
    });
  });

  describe('HTTP/2 streams: http2.server.stream.*', () => {
    it(`created, start, finish and close${hasH2Channels ? '' : ' (not published on this Node)'}`, async () => {
      const events = [];
      let seen;
      for (const name of ['created', 'start', 'finish', 'close', 'error']) {
        subscribe(`http2.server.stream.${name}`, (m) => events.push([name, m]));
      }
      const { port } = await startH2((stream, headers) => {
        seen = { stream, headers };
        events.push(['stream']);
        stream.respond({ ':status': 201, 'x-a': '1' });
        stream.end('ok');
      });
      const session = connect(port);
      const r = await request(session, { ':path': '/s' });
      assert.strictEqual(r.headers[':status'], 201);
      assert.strictEqual(r.body.toString(), 'ok');
      await common.sleep(50);
      const names = events.map((e) => e[0]);
      if (!hasH2Channels) {
        assert.deepStrictEqual(names, ['stream']);
        return;
      }
      assert.deepStrictEqual(names, ['created', 'start', 'stream', 'finish', ...(hasH2Close ? ['close'] : [])]);
      const created = events[0][1];
      assert.strictEqual(created.stream, seen.stream);
      assert.strictEqual(created.headers, seen.headers);
      assert.strictEqual(created.headers[':path'], '/s');
      assert.strictEqual(events[1][1].stream, seen.stream);
      const finish = events[3][1];
      assert.strictEqual(finish.stream, seen.stream);
      assert.strictEqual(finish.headers[':status'], 201);
      assert.strictEqual(finish.headers['x-a'], '1');
      assert.strictEqual(typeof finish.headers.date, 'string');
      // node's stream state flags: READY | HEADERS_SENT.
      assert.strictEqual(finish.flags, 0x5);
      if (hasH2Close) assert.strictEqual(events[4][1].stream, seen.stream);
    });

    it(`a client's reset with an error code: close and error${hasH2Channels ? '' : ' (not published on this Node)'}`, async () => {
      const events = [];
      for (const name of ['close', 'error']) {
        subscribe(`http2.server.stream.${name}`, (m) => events.push([name, m]));
      }
      let serverStream;
      const gotStream = new Promise((resolve) => {
        startH2((stream) => {
          serverStream = stream;
          stream.on('error', () => {});
          resolve();
        }).then(({ port }) => {
          const session = connect(port);
          const req = session.request({ ':path': '/' }, { endStream: false });
          req.on('error', () => {});
          gotStream.then(() => req.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
        });
      });
      await gotStream;
      await common.withTimeout(new Promise((r) => serverStream.on('close', r)), 5000, 'stream close');
      await common.sleep(20);
      const names = events.map((e) => e[0]);
      if (!hasH2Channels) {
        assert.deepStrictEqual(names, []);
        return;
      }
      assert.deepStrictEqual(names, [...(hasH2Close ? ['close'] : []), 'error']);
      const err = events.find((e) => e[0] === 'error')[1];
      assert.strictEqual(err.stream, serverStream);
      assert.strictEqual(err.error.code, 'ERR_HTTP2_STREAM_ERROR');
    });
  });

  describe('HTTP/3 streams: http2.server.stream.* as on HTTP/2 [sluice-only]', () => {
    it('created, start, finish and close, with the stream and its headers', async function () {
      if (common.isNode || !hasH2Channels) this.skip();
      const { h3, haveClient, startH3Server, gtls } = require('../http3/h3common');
      if (!h3 || !haveClient) this.skip();
      const events = [];
      let seen;
      for (const name of ['created', 'start', 'finish', 'close', 'error']) {
        subscribe(`http2.server.stream.${name}`, (m) => events.push([name, m]));
      }
      const { server, port } = await startH3Server();
      server.on('stream', (stream, headers) => {
        seen = { stream, headers };
        events.push(['stream']);
        stream.respond({ ':status': 201, 'x-a': '1' });
        stream.end('ok');
      });
      const r = await gtls(port, ['/s3']);
      assert.strictEqual(r.responses.get('/s3').status, 201);
      await common.sleep(50);
      assert.deepStrictEqual(events.map((e) => e[0]), ['created', 'start', 'stream', 'finish', 'close']);
      assert.strictEqual(events[0][1].stream, seen.stream);
      assert.strictEqual(events[0][1].headers, seen.headers);
      assert.strictEqual(events[0][1].headers[':path'], '/s3');
      assert.strictEqual(events[1][1].stream, seen.stream);
      assert.strictEqual(events[3][1].headers[':status'], 201);
      assert.strictEqual(events[3][1].flags, 0x5);
      assert.strictEqual(events[4][1].stream, seen.stream);
    });
  });

  it('http.Server: sluice\'s servers are instances, as node\'s', async () => {
    const { server } = await common.startServer((req, res) => res.end());
    assert.ok(server instanceof http.Server);
  });
});
