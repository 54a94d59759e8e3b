'use strict';
// node test/soak/truncate_while_sent.js [--sendfile false]
//
// What the mixed soak found (docs/benchmarks.md "Soak"), alone: an
// HTTP/1.1 file response whose file is cut to half while it is sent. The
// client reads the head and first bytes, the file is truncated, then the
// client reads to the end. The honest answer is a body shorter than its
// Content-Length and a closed connection; with sendfile the client gets
// the whole length, the bytes from the cut to the end of the page-cache
// folio replaced by zeros (sendfile left references to the page cache in
// the socket buffer, and truncation zeroes the partial folio in place).
// Prints what arrived; exits 1 when the body is full length but wrong.
//
// The server now checks the file around every sendfile call and resets
// the connection when it changed (test/files/sendfile_file_changes.test.js
// holds that window open and checks it). This script is the part no check
// covers: here all 300,000 bytes are handed to the kernel before the
// client's first read, so the truncation comes after the last check and
// still exits 1 with sendfile (docs/files.md "sendfile", item 6: what
// remains, and why files should be replaced by rename).
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const sluice = require(path.join(__dirname, '..', '..'));

const a = process.argv.slice(2);
const i = a.indexOf('--sendfile');
const sendfile = i < 0 || a[i + 1] !== 'false';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-trunc-'));
const file = path.join(dir, 'c.txt');
const N = 300000;
const data = Buffer.alloc(N, 'a');
fs.writeFileSync(file, data);
const server = sluice.createServer({ sendfile }, (req, res) => res.respondWithFile(file));
server.listen(0, '127.0.0.1', () => {
  const sock = net.connect(server.address().port, '127.0.0.1');
  sock.write('GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  let buf = Buffer.alloc(0);
  let cut = false;
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    if (!cut) { cut = true; fs.truncateSync(file, N / 2); }
  });
  sock.on('close', () => {
    const body = buf.subarray(buf.indexOf('\r\n\r\n') + 4);
    const good = data.subarray(0, body.length).equals(body);
    console.log(`sendfile ${sendfile}: ${body.length} of ${N} bytes, ` +
      `${body.filter((x) => x === 0).length} zero bytes: ${good ? (body.length < N ? 'short, connection closed: ok' : 'whole (sent before the cut): ok') : 'WRONG BYTES'}`);
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(good ? 0 : 1);
  });
});
