'use strict';

// Request smuggling and framing: hostile HTTP/1.1 inputs, each sent to
// sluice AND to a node:http server in the same test. node is the
// reference: a row passes when sluice gives the same answer (statuses,
// whether the connection closed, and what the handler saw), or the answer
// the row documents as a deliberate difference (`differs`, also listed in
// docs/api.md "Differences from node:http"). A crash or hang fails.

const http = require('node:http');
const common = require('../common');
const { assert } = common;

const H = 'Host: h\r\n';
// node 22+ bundles llhttp 9.4, which refuses an empty Transfer-Encoding
// (node 20's 9.3 ignores it; sluice refuses it on every node).
const LLHTTP_9_4 = (() => {
  const [major, minor] = process.versions.llhttp.split('.').map(Number);
  return major > 9 || (major === 9 && minor >= 4);
})();
const CHUNKED = `Transfer-Encoding: chunked\r\n`;
const post = (headers, body = '') => `POST / HTTP/1.1\r\n${H}${headers}\r\n${body}`;
const get = (line, headers = H) => `${line}\r\n${headers}\r\n`;

// expect: statuses and "close" / "open" (what node answers, and sluice
// too unless `differs` gives sluice's answer and why).
// wire: a string, or parts written 30 ms apart (splits at chosen bytes).
const ROWS = [
  // --- Content-Length / Transfer-Encoding conflicts (CL.TE, TE.CL)
  { name: 'CL + TE', wire: post(`Content-Length: 3\r\n${CHUNKED}`, '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'TE + CL', wire: post(`${CHUNKED}Content-Length: 3\r\n`, '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'CL: 0 + TE', wire: post(`Content-Length: 0\r\n${CHUNKED}`, '0\r\n\r\n'), expect: '400 close' },
  { name: 'CL.TE smuggle: CL covers a chunked terminator, a GET follows', wire: post(`Content-Length: 6\r\n${CHUNKED}`, `0\r\n\r\nGET /smuggled HTTP/1.1\r\n${H}\r\n`), expect: '400 close' },
  { name: 'Content-Length in the trailers (regression: llhttp 8 accepted it)', wire: post(CHUNKED, '3\r\nabc\r\n0\r\nContent-Length: 5\r\n\r\n'), expect: '400 close' },
  { name: 'Transfer-Encoding in the trailers', wire: post(CHUNKED, '3\r\nabc\r\n0\r\nTransfer-Encoding: chunked\r\n\r\n'), expect: '400 close' },
  // --- Content-Length values
  { name: 'duplicate Content-Length, equal values', wire: post('Content-Length: 3\r\nContent-Length: 3\r\n', 'abc'), expect: '400 close' },
  { name: 'duplicate Content-Length, different values', wire: post('Content-Length: 3\r\nContent-Length: 4\r\n', 'abcd'), expect: '400 close' },
  { name: 'comma-separated Content-Length, equal', wire: post('Content-Length: 3, 3\r\n', 'abc'), expect: '400 close' },
  { name: 'comma-separated Content-Length, different', wire: post('Content-Length: 3, 4\r\n', 'abcd'), expect: '400 close' },
  { name: 'negative Content-Length', wire: post('Content-Length: -1\r\n'), expect: '400 close' },
  { name: 'Content-Length with a plus sign', wire: post('Content-Length: +3\r\n', 'abc'), expect: '400 close' },
  { name: 'overflowing Content-Length (2^64)', wire: post('Content-Length: 18446744073709551616\r\n'), expect: '400 close' },
  { name: 'overflowing Content-Length (23 digits)', wire: post('Content-Length: 99999999999999999999999\r\n'), expect: '400 close' },
  { name: 'hex Content-Length', wire: post('Content-Length: 0x3\r\n', 'abc'), expect: '400 close' },
  { name: 'Content-Length with inner space', wire: post('Content-Length: 1 2\r\n', 'abc'), expect: '400 close' },
  { name: 'empty Content-Length', wire: post('Content-Length:\r\n'), expect: '400 close' },
  { name: 'Content-Length with leading zeros (accepted)', wire: post('Content-Length: 003\r\n', 'abc'), expect: '200 open' },
  // --- Transfer-Encoding values
  { name: 'Transfer-Encoding: chunked, identity', wire: post('Transfer-Encoding: chunked, identity\r\n', '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'Transfer-Encoding not ending in chunked (gzip)', wire: post('Transfer-Encoding: gzip\r\n', 'abc'), expect: '400 close' },
  { name: 'Transfer-Encoding: gzip, chunked (accepted)', wire: post('Transfer-Encoding: gzip, chunked\r\n', '3\r\nabc\r\n0\r\n\r\n'), expect: '200 open' },
  { name: 'Transfer-Encoding twice (chunked, chunked)', wire: post(`${CHUNKED}${CHUNKED}`, '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'Transfer-Encoding: chunked then gzip (second header)', wire: post(`${CHUNKED}Transfer-Encoding: gzip\r\n`, '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'Transfer-Encoding: xchunked', wire: post('Transfer-Encoding: xchunked\r\n', '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'Transfer-Encoding: chunked;x=1', wire: post('Transfer-Encoding: chunked;x=1\r\n', '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'Transfer-Encoding after a vertical tab', wire: post('Transfer-Encoding:\x0bchunked\r\n', '3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'Transfer_Encoding (underscore) is just a header; CL frames', wire: post('Transfer_Encoding: chunked\r\nContent-Length: 3\r\n', 'abc'), expect: '200 open' },
  // --- chunk framing
  { name: 'invalid chunk size', wire: post(CHUNKED, 'zz\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'overflowing chunk size', wire: post(CHUNKED, 'fffffffffffffffff1\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'negative chunk size', wire: post(CHUNKED, '-3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: '0x-prefixed chunk size', wire: post(CHUNKED, '0x3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'space before the chunk size', wire: post(CHUNKED, ' 3\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'space after the chunk size', wire: post(CHUNKED, '3 \r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'chunk data not followed by CRLF', wire: post(CHUNKED, '3\r\nabcXX0\r\n\r\n'), expect: '400 close' },
  { name: 'chunk size line ended by CR alone', wire: post(CHUNKED, '3\rabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'chunk extension (accepted, dropped)', wire: post(CHUNKED, '3;foo=bar\r\nabc\r\n0\r\n\r\n'), expect: '200 open' },
  { name: 'quoted chunk extension (accepted)', wire: post(CHUNKED, '3;foo="b r"\r\nabc\r\n0\r\n\r\n'), expect: '200 open' },
  { name: 'control character in a chunk extension', wire: post(CHUNKED, '3;f\x01o=bar\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  {
    name: 'two unquoted chunk extensions (3;a=1;b=2)', wire: post(CHUNKED, '3;a=1;b=2\r\nabc\r\n0\r\n\r\n'), expect: '200 open',
    differs: { expect: '400 close', why: "llhttp 8.1 (Debian's, compiled in) rejects a second extension after an unquoted value; llhttp 9 accepts it" },
  },
  { name: 'chunk extensions of 16 KiB (the limit) are accepted', wire: post(CHUNKED, `3;${'x'.repeat(16384)}\r\nabc\r\n0\r\n\r\n`), expect: '200 open' },
  { name: 'chunk extensions over 16 KiB -> 413 (regression: no limit before)', wire: post(CHUNKED, `3;a=${'x'.repeat(20000)}\r\nabc\r\n0\r\n\r\n`), expect: '413 close' },
  { name: 'oversized chunk-size line (20000 zeros) is accepted as node does', wire: post(CHUNKED, `${'0'.repeat(20000)}3\r\nabc\r\n0\r\n\r\n`), expect: '200 open' },
  // --- bare LF / CR
  { name: 'bare LF ending the request line (regression: llhttp 8 accepted it)', wire: `GET / HTTP/1.1\n${H}\r\n`, expect: '400 close' },
  { name: 'bare LF ending an HTTP/1.0 request line', wire: 'GET / HTTP/1.0\n\r\n', expect: '400 close' },
  { name: 'bare LF after the version, split right after the version', wire: ['GET / HTTP/1.1', `\n${H}\r\n`], expect: '400 close' },
  { name: 'CRLF after the version, split right after the version (accepted)', wire: ['GET / HTTP/1.1', `\r\n${H}\r\n`], expect: '200 open' },
  { name: 'bare LF between headers', wire: `GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n`, expect: '400 close' },
  { name: 'bare LF ending the head', wire: `GET / HTTP/1.1\r\nHost: h\n\n`, expect: '400 close' },
  { name: 'bare LF after a chunk size', wire: post(CHUNKED, '3\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'bare LF after chunk data', wire: post(CHUNKED, '3\r\nabc\n0\r\n\r\n'), expect: '400 close' },
  { name: 'bare LF in the last chunk', wire: post(CHUNKED, '3\r\nabc\r\n0\n\n'), expect: '400 close' },
  { name: 'bare CR inside the head', wire: `GET / HTTP/1.1\r\nHost: h\rX: y\r\n\r\n`, expect: '400 close' },
  // --- header syntax
  { name: 'obs-fold (SP)', wire: get('GET / HTTP/1.1', `${H}X-A: a\r\n b\r\n`), expect: '400 close' },
  { name: 'obs-fold (HTAB)', wire: get('GET / HTTP/1.1', `${H}X-A: a\r\n\tb\r\n`), expect: '400 close' },
  { name: 'obs-fold in trailers', wire: post(CHUNKED, '3\r\nabc\r\n0\r\nX-T: a\r\n b\r\n\r\n'), expect: '400 close' },
  // A fold whose first line is empty yields one ordinary-looking value to
  // llhttp 8.1 (regression: sluice unfolded these and framed the body by
  // them, so a front proxy that ignores the fold desynchronises).
  { name: 'fold after an empty Transfer-Encoding line, a GET pipelined in the body', wire: post('Transfer-Encoding:\r\n chunked\r\n', `5\r\nhello\r\n0\r\n\r\nGET /p2 HTTP/1.1\r\n${H}\r\n`), expect: '400 close' },
  { name: 'fold after an empty Content-Length line', wire: post('Content-Length:\r\n 5\r\n', 'hello'), expect: '400 close' },
  { name: 'fold after an empty Host line', wire: get('GET / HTTP/1.1', 'Host:\r\n x\r\n'), expect: '400 close' },
  { name: 'fold after an empty X-A line', wire: get('GET / HTTP/1.1', `${H}X-A:\r\n b\r\n`), expect: '400 close' },
  { name: 'fold (HTAB) after an empty line', wire: get('GET / HTTP/1.1', `${H}X-A:\r\n\tb\r\n`), expect: '400 close' },
  { name: 'fold after an empty line with trailing OWS', wire: get('GET / HTTP/1.1', `${H}X-A: \t\r\n b\r\n`), expect: '400 close' },
  { name: 'two folds after an empty line', wire: get('GET / HTTP/1.1', `${H}X-A:\r\n \r\n b\r\n`), expect: '400 close' },
  { name: 'whitespace-only fold after an empty line, then a header', wire: get('GET / HTTP/1.1', `${H}X-A:\r\n \r\nX-B: c\r\n`), expect: '400 close' },
  { name: 'whitespace-only fold after a value, ending the head', wire: get('GET / HTTP/1.1', `${H}X-A: a\r\n \r\n`), expect: '400 close' },
  { name: 'fold after a value with trailing OWS', wire: get('GET / HTTP/1.1', `${H}X-A: a \r\n b\r\n`), expect: '400 close' },
  { name: 'fold of the first header line after an empty value', wire: get('GET / HTTP/1.1', `X-A:\r\n b\r\n${H}`), expect: '400 close' },
  { name: 'fold after an empty Transfer-Encoding line, with Content-Length', wire: post('Content-Length: 5\r\nTransfer-Encoding:\r\n chunked\r\n', 'hello'), expect: '400 close' },
  { name: 'fold after an empty trailer line', wire: post(CHUNKED, '3\r\nabc\r\n0\r\nX-T:\r\n b\r\n\r\n'), expect: '400 close' },
  { name: 'whitespace-only fold ending the trailers', wire: post(CHUNKED, '3\r\nabc\r\n0\r\nX-T: a\r\n \r\n\r\n'), expect: '400 close' },
  { name: 'a body that looks like a fold stays body', wire: post('Content-Length: 5\r\n', `\r\n \r\n`) + get('GET /2 HTTP/1.1'), expect: '200,200 open' },
  { name: 'fold after an empty line, split right after the LF', wire: [`POST / HTTP/1.1\r\n${H}Transfer-Encoding:\r\n`, ` chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`], expect: '400 close' },
  { name: 'fold after an empty line, split between CR and LF', wire: [`POST / HTTP/1.1\r\n${H}Transfer-Encoding:\r`, `\n chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`], expect: '400 close' },
  // Found by the differential fuzzer (test/differential): llhttp 8.1
  // accepted these, node's llhttp 9 refuses them.
  { name: 'bare LF as the blank line after a CRLF header line', wire: `GET / HTTP/1.1\r\n${H}\n`, expect: '400 close' },
  { name: 'bare LF as the blank line after the request line', wire: 'GET / HTTP/1.1\r\n\n', expect: '400 close' },
  { name: 'bare LF ending an empty trailer section', wire: post(CHUNKED, '3\r\nabc\r\n0\r\n\n'), expect: '400 close' },
  { name: 'bare LF ending the trailers', wire: post(CHUNKED, '3\r\nabc\r\n0\r\nX-T: a\r\n\n'), expect: '400 close' },
  { name: 'empty Transfer-Encoding after Content-Length', wire: post('Content-Length: 3\r\nTransfer-Encoding:\r\n', 'abc'), expect: '400 close' },
  {
    name: 'Content-Length after an empty Transfer-Encoding', wire: post('Transfer-Encoding:\r\nContent-Length: 3\r\n', 'abc'),
    ...(LLHTTP_9_4 ? { expect: '400 close' } : { expect: '200 open', differs: { expect: '400 close', why: 'empty-transfer-encoding in docs/security.md: refused as node 22+ refuses it' } }),
  },
  {
    name: 'empty Transfer-Encoding alone', wire: post('Transfer-Encoding: \r\n'),
    ...(LLHTTP_9_4 ? { expect: '400 close' } : { expect: '200 open', differs: { expect: '400 close', why: 'empty-transfer-encoding in docs/security.md: refused as node 22+ refuses it' } }),
  },
  {
    name: 'Connection: close with a tab after the token, then a pipelined request', wire: get('GET /1 HTTP/1.1', `${H}Connection: close\t\r\n`) + get('GET /2 HTTP/1.1'),
    ...(LLHTTP_9_4 ? { expect: '400 close' } : { expect: '200,200 open', differs: { expect: '400 close', why: 'connection-close-trailing-tab in docs/security.md: read as close, as node 22+ reads it' } }),
  },
  { name: 'DEL in a quoted chunk extension value', wire: post(CHUNKED, '3;a="\x7f"\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'empty chunk extension value followed by ;', wire: post(CHUNKED, '3;a=;\r\nabc\r\n0\r\n\r\n'), expect: '400 close' },
  { name: 'empty chunk extension value (accepted)', wire: post(CHUNKED, '3;a=\r\nabc\r\n0\r\n\r\n'), expect: '200 open' },
  { name: 'trailers after an empty chunked body reach the handler', wire: post(CHUNKED, '0\r\nX-T: a\r\n\r\n'), expect: '200 open' },
  { name: 'an unknown Expect on HTTP/1.0 is ignored, as node', wire: 'GET / HTTP/1.0\r\nExpect: x\r\n\r\n', expect: '200 close' },
  { name: 'Expect: x, 100-continue means 100-continue, as node', wire: get('GET / HTTP/1.1', `${H}Expect: x, 100-continue\r\n`), expect: '100,200 open' },
  { name: 'whitespace before the colon', wire: get('GET / HTTP/1.1', `${H}X-A : x\r\n`), expect: '400 close' },
  { name: 'whitespace before the colon of Content-Length', wire: post('Content-Length : 3\r\n', 'abc'), expect: '400 close' },
  { name: 'leading whitespace on the first header line', wire: get('GET / HTTP/1.1', ` ${H}`), expect: '400 close' },
  { name: 'empty header name (regression: llhttp 8 accepted it)', wire: get('GET / HTTP/1.1', `${H}: x\r\n`), expect: '400 close' },
  { name: 'empty header name as the first line', wire: get('GET / HTTP/1.1', `: x\r\n${H}`), expect: '400 close' },
  { name: 'header line without a colon', wire: get('GET / HTTP/1.1', `${H}NoColon\r\n`), expect: '400 close' },
  { name: 'separator (/) in a header name', wire: get('GET / HTTP/1.1', `${H}X/Y: z\r\n`), expect: '400 close' },
  { name: 'NUL in a header value', wire: get('GET / HTTP/1.1', `${H}X-A: a\x00b\r\n`), expect: '400 close' },
  { name: 'NUL in a header name', wire: get('GET / HTTP/1.1', `${H}X\x00A: b\r\n`), expect: '400 close' },
  { name: 'CTL 0x01 in a header value', wire: get('GET / HTTP/1.1', `${H}X-A: a\x01b\r\n`), expect: '400 close' },
  { name: 'DEL in a header value', wire: get('GET / HTTP/1.1', `${H}X-A: a\x7fb\r\n`), expect: '400 close' },
  { name: 'HTAB and obs-text in a header value (accepted)', wire: get('GET / HTTP/1.1', `${H}X-A: a\tb\xe9c\r\n`), expect: '200 open' },
  // --- request line: targets, versions, methods
  { name: 'absolute-form target (accepted)', wire: get('GET http://example.com/x?y HTTP/1.1'), expect: '200 open' },
  { name: 'asterisk-form: OPTIONS * (accepted)', wire: get('OPTIONS * HTTP/1.1'), expect: '200 open' },
  { name: 'NUL in the target', wire: get('GET /a\x00b HTTP/1.1'), expect: '400 close' },
  { name: 'space inside the target', wire: get('GET /a b HTTP/1.1'), expect: '400 close' },
  { name: 'raw UTF-8 in the target', wire: get('GET /\xc3\xa9 HTTP/1.1'), expect: '400 close' },
  { name: 'HTTP/0.9 request line (answered, then close)', wire: 'GET /\r\n\r\n', expect: '200 close' },
  { name: 'HTTP/2.0 in an HTTP/1 request line (answered, then close)', wire: get('GET / HTTP/2.0'), expect: '200 close' },
  { name: 'HTTP/1.2', wire: get('GET / HTTP/1.2'), expect: '400 close' },
  { name: 'HTTP/1.10', wire: get('GET / HTTP/1.10'), expect: '400 close' },
  { name: 'lower-case http/1.1', wire: get('GET / http/1.1'), expect: '400 close' },
  { name: 'bad method token G(T', wire: get('G(T / HTTP/1.1'), expect: '400 close' },
  { name: 'unknown method FOO', wire: get('FOO / HTTP/1.1'), expect: '400 close' },
  { name: 'lower-case method', wire: get('get / HTTP/1.1'), expect: '400 close' },
  { name: '20 KB method token', wire: get(`${'G'.repeat(20000)} / HTTP/1.1`), expect: '400 close' },
  {
    name: 'QUERY method', wire: get('QUERY / HTTP/1.1'), expect: '200 open',
    differs: { expect: '400 close', why: 'llhttp 8.1 does not know QUERY (llhttp 9 added it)' },
  },
  { name: 'PRI * HTTP/1.1 that is not the HTTP/2 preface', wire: get('PRI * HTTP/1.1'), expect: '400 close' },
  { name: 'HTTP/1.1 without Host (regression: sluice answered 200)', wire: 'GET / HTTP/1.1\r\n\r\n', expect: '400 close' },
  { name: 'HTTP/1.0 without Host (accepted)', wire: 'GET / HTTP/1.0\r\n\r\n', expect: '200 close' },
  {
    name: 'CONNECT: no tunnel, closed without an answer (regression: sluice answered and parsed the tunnel as HTTP)',
    wire: get('CONNECT example.com:443 HTTP/1.1') + get('GET /tunnelled HTTP/1.1'), expect: ' close',
  },
  // --- requests hidden in bodies, pipelining
  { name: 'a request inside a Content-Length body stays body', wire: post('Content-Length: 35\r\n', `GET /smuggled HTTP/1.1\r\n${H}\r\n`), expect: '200 open' },
  { name: 'a request inside a chunk stays body', wire: post(CHUNKED, `23\r\nGET /smuggled HTTP/1.1\r\n${H}\r\n\r\n0\r\n\r\n`), expect: '200 open' },
  { name: 'GET with a Content-Length body, then a pipelined GET', wire: `GET / HTTP/1.1\r\n${H}Content-Length: 3\r\n\r\nabc` + get('GET /2 HTTP/1.1'), expect: '200,200 open' },
  // Data after a Connection: close request is a parse error for llhttp
  // (HPE_CLOSED_CONNECTION); the 400 goes out before the handler answers
  // (it answers on 'end', a tick later), so only the 400 is seen.
  { name: 'Connection: close, then a pipelined request', wire: get('GET /1 HTTP/1.1', `${H}Connection: close\r\n`) + get('GET /2 HTTP/1.1'), expect: '400 close' },
  { name: 'a valid request, then garbage, in one write', wire: get('GET /1 HTTP/1.1') + 'BLAH BLAH BLAH\r\n\r\n', expect: '400 close' },
  {
    name: 'HTTP/1.0 with Connection: keep-alive',
    wire: 'GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n', expect: '200 close',
    differs: { expect: '200 open', why: 'sluice keeps an HTTP/1.0 keep-alive connection when the response has a Content-Length; node closes unless the handler set Content-Length itself' },
  },
];

function echo(req, res) {
  const chunks = [];
  req.on('data', (d) => chunks.push(Buffer.from(d)));
  req.on('error', () => {});
  req.on('end', () => {
    res.end(JSON.stringify({
      method: req.method,
      url: req.url,
      version: req.httpVersion,
      headers: req.rawHeaders,
      body: Buffer.concat(chunks).toString('latin1'),
      trailers: req.rawTrailers,
    }));
  });
}

// Sends `wire` on a fresh connection and waits until the server closes it,
// or it has answered completely and stayed quiet, or it has said nothing
// for a while. Returns { outcome: "statuses close|open", echoes }.
async function probe(port, wire) {
  const c = await common.rawConnect(port);
  const parts = Array.isArray(wire) ? wire : [wire];
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) await common.sleep(30);
    if (!c.closed) c.socket.write(Buffer.from(parts[i], 'latin1'));
  }
  const t0 = Date.now();
  let len = -1;
  let changed = Date.now();
  while (!c.closed && Date.now() - t0 < 4000) {
    await common.sleep(20);
    if (c.len !== len) {
      len = c.len;
      changed = Date.now();
    }
    const quiet = Date.now() - changed;
    const r = common.parseResponses(c.data, {});
    if (r.responses.length > 0 && !r.incomplete && quiet >= 150) break;
    if (quiet >= 700) break;
  }
  // A close that is on its way (FIN after the last response) counts.
  if (!c.closed) await common.sleep(30);
  const closed = c.closed;
  const rs = common.parseResponses(c.data, { ended: closed }).responses;
  c.destroy();
  const statuses = rs.map((r) => r.statusCode).join(',');
  const echoes = rs.filter((r) => r.statusCode === 200).map((r) => JSON.parse(r.body.toString('latin1')));
  return { outcome: `${statuses} ${closed ? 'close' : 'open'}`, echoes };
}

describe(`hardening: request smuggling and framing vs node:http [${common.implName}]`, function () {
  let port;
  let nodePort;
  let server;

  before(async function () {
    ({ server, port } = await common.startServer(echo));
    const ref = common.trackServer(http.createServer({ connectionsCheckingInterval: 50 }, echo));
    await new Promise((resolve) => ref.listen(0, '127.0.0.1', resolve));
    nodePort = ref.address().port;
  });
  after(common.cleanup);

  it(`has at least 30 rows (${ROWS.length})`, function () {
    assert.ok(ROWS.length >= 30);
  });

  for (const row of ROWS) {
    it(`${row.name} -> ${row.expect}${row.differs ? ` (sluice: ${row.differs.expect})` : ''}`, async function () {
      const [ours, ref] = await Promise.all([probe(port, row.wire), probe(nodePort, row.wire)]);
      assert.strictEqual(ref.outcome, row.expect, `node:http's answer changed: ${ref.outcome}`);
      const want = row.differs && common.isSluice ? row.differs.expect : row.expect;
      assert.strictEqual(ours.outcome, want, row.differs ? `documented difference: ${row.differs.why}` : 'node answers this row differently');
      // What the handler saw must match node's, request for request (a
      // smuggled request would show up here).
      if (!row.differs) assert.deepStrictEqual(ours.echoes, ref.echoes);
    });
  }

  it('the server still serves and holds no connection afterwards', async function () {
    const r = await common.httpRequest(port, { path: '/after' });
    assert.strictEqual(r.statusCode, 200);
    assert.strictEqual(JSON.parse(r.body).url, '/after');
    if (common.isSluice) {
      await common.withTimeout((async () => {
        while (server._connections !== 0) await common.sleep(20);
      })(), 3000, () => `connections to drain (${server._connections})`);
    }
  });
});

// The four folds of the smuggling report, split into two reads at every
// byte: the fold may straddle reads in any way (CR | LF, LF | SP, the
// whitespace alone), and must be refused whole, with nothing dispatched.
describe(`hardening: line folds split at every byte vs node:http [${common.implName}]`, function () {
  const FOLDS = [
    `POST /a HTTP/1.1\r\n${H}Transfer-Encoding:\r\n chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /p2 HTTP/1.1\r\n${H}\r\n`,
    `POST /a HTTP/1.1\r\n${H}Content-Length:\r\n 5\r\n\r\nhello`,
    'GET / HTTP/1.1\r\nHost:\r\n x\r\n\r\n',
    `GET / HTTP/1.1\r\n${H}X-A:\r\n b\r\n\r\n`,
    `GET / HTTP/1.1\r\n${H}X-A: a\r\n \r\n\r\n`,
  ];
  const seen = { ours: 0, ref: 0 };
  let port;
  let nodePort;

  before(async function () {
    ({ port } = await common.startServer((req, res) => { seen.ours++; echo(req, res); }));
    const ref = common.trackServer(http.createServer((req, res) => { seen.ref++; echo(req, res); }));
    await new Promise((resolve) => ref.listen(0, '127.0.0.1', resolve));
    nodePort = ref.address().port;
  });
  after(common.cleanup);

  async function split(p, wire, at) {
    const c = await common.rawConnect(p);
    c.socket.write(Buffer.from(wire.slice(0, at), 'latin1'));
    await common.sleep(2);
    if (!c.closed) c.socket.write(Buffer.from(wire.slice(at), 'latin1'));
    await c.waitClose(3000);
    return c.text.split('\r\n')[0];
  }

  FOLDS.forEach((wire, i) => {
    it(`fold ${i + 1}: ${JSON.stringify(wire.slice(0, 60))}... -> 400 at each of ${wire.length - 1} splits`, async function () {
      const splits = [];
      for (let at = 1; at < wire.length; at++) splits.push(at);
      const bad = [];
      // A few connections at a time: quick, and the reads stay separate.
      for (let k = 0; k < splits.length; k += 8) {
        await Promise.all(splits.slice(k, k + 8).map(async (at) => {
          const [ours, ref] = await Promise.all([split(port, wire, at), split(nodePort, wire, at)]);
          assert.strictEqual(ref, 'HTTP/1.1 400 Bad Request', `node:http's answer changed at split ${at}`);
          if (ours !== ref) bad.push(`${at}: ${ours}`);
        }));
      }
      assert.deepStrictEqual(bad, [], 'splits where the fold was not refused');
      assert.strictEqual(seen.ref, 0);
      assert.strictEqual(seen.ours, 0, 'a folded request reached the handler');
    });
  });
});
