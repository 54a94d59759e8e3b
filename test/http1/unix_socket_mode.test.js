'use strict';

// listen({ path, readableAll, writableAll }) makes the Unix socket file
// readable / writable by every user (mode bits for group and others), as
// net.Server does with uv_pipe_chmod; without them the mode is the
// umask's. Shared: also run against node:http.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const common = require('../common');
const { assert } = common;

function socketPath() {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-mode-')), 's.sock');
}

function listen(server, options) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

describe(`http1 Unix socket permissions [${common.implName}]`, function () {
  afterEach(common.cleanup);

  const cases = [
    { opts: { readableAll: true, writableAll: true }, bits: 0o066 },
    { opts: { readableAll: true }, bits: 0o044 },
    { opts: { writableAll: true }, bits: 0o022 },
  ];
  for (const { opts, bits } of cases) {
    it(`listen({ path, ${Object.keys(opts).join(', ')} }): group and others get ${bits.toString(8)}`, async function () {
      // umask 077: the bind alone gives group and others nothing.
      const old = process.umask(0o077);
      try {
        const file = socketPath();
        const server = common.trackServer(common.impl.createServer((req, res) => res.end('ok')));
        await listen(server, { path: file, ...opts });
        assert.strictEqual(fs.statSync(file).mode & 0o077, bits);
      } finally {
        process.umask(old);
      }
    });
  }

  it('without the options the mode follows the umask (no bits added for others)', async function () {
    const old = process.umask(0o077);
    try {
      const file = socketPath();
      const server = common.trackServer(common.impl.createServer((req, res) => res.end('ok')));
      await listen(server, { path: file });
      assert.strictEqual(fs.statSync(file).mode & 0o077, 0);
    } finally {
      process.umask(old);
    }
  });
});
