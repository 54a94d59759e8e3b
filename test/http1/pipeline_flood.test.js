'use strict';

// More pipelined requests than the server queues responses for (128):
// parsing pauses with the rest of the input held back, and resumes as
// responses finish — whatever else paused the connection meanwhile.

const assert = require('node:assert');
const common = require('../common');

describe(`http1 pipelining beyond the response queue [${common.implName}]`, function () {
  afterEach(common.cleanup);

  it('1000 pipelined GETs answered asynchronously come back complete and in order', async function () {
    const { port } = await common.startServer((req, res) => {
      setTimeout(() => res.end(req.url), Math.random() * 3);
    });
    const c = await common.rawConnect(port);
    let wire = '';
    for (let i = 0; i < 1000; i++) wire += `GET /${i} HTTP/1.1\r\nHost: h\r\n\r\n`;
    c.socket.write(wire);
    const rs = await c.responses(1000, {}, 15000);
    for (let i = 0; i < 1000; i++) assert.strictEqual(rs[i].body.toString(), `/${i}`);
  });

  it('300 pipelined uploads whose handlers pause and resume the body', async function () {
    const { port } = await common.startServer((req, res) => {
      let n = 0;
      req.on('data', (d) => {
        n += d.length;
        req.pause();
        setImmediate(() => req.resume());
      });
      req.on('end', () => setImmediate(() => res.end(`${req.url}:${n}`)));
    });
    const c = await common.rawConnect(port);
    const parts = [];
    for (let i = 0; i < 300; i++) {
      const body = 'x'.repeat(i * 7 % 2000);
      parts.push(`POST /${i} HTTP/1.1\r\nHost: h\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
    }
    c.socket.write(parts.join(''));
    const rs = await c.responses(300, {}, 15000);
    for (let i = 0; i < 300; i++) assert.strictEqual(rs[i].body.toString(), `/${i}:${i * 7 % 2000}`);
  });
});
