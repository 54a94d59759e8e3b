'use strict';

// HTTP/3's QUIC is node's own OpenSSL 3.5 stack: the addon links no QUIC or
// TLS library (no libssl, libcrypto, ngtcp2, nghttp3, quictls, msquic);
// its references to the QUIC API are weak (so the addon loads on Node 20,
// whose OpenSSL 3.0 lacks them: see test/http3/features.test.js) and, on a
// node that has them, bind to node's copy (dladdr).

const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const common = require('../common');
const { assert } = common;

const maybe = common.isSluice ? describe : describe.skip;

maybe('QUIC linkage', function () {
  const binding = common.libInternal('common/binding');
  const file = process.env.SLUICE_ADDON || require.resolve('../../build/Release/sluice.node');

  it('the addon needs no TLS or QUIC library (readelf NEEDED)', function () {
    const out = execFileSync('readelf', ['-d', file], { encoding: 'utf8' });
    const needed = [...out.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
    for (const lib of needed) {
      assert.doesNotMatch(lib, /ssl|crypto|quic|ngtcp2|nghttp3|gnutls|msquic/i, needed.join(', '));
    }
  });

  it('the QUIC API is referenced weakly (undefined, weak: the addon loads without it)', function () {
    const out = execFileSync('nm', ['-D', '--undefined-only', file], { encoding: 'utf8' });
    const kind = new Map(out.split('\n').map((l) => l.trim().split(/\s+/)).filter((p) => p.length === 2)
      .map(([k, name]) => [name.split('@')[0], k]));
    // Every function src/core/quic/quic_symbols.h declares weak (its
    // `#pragma weak` lines are the list), and which the addon calls.
    const header = fs.readFileSync(require.resolve('../../src/core/quic/quic_symbols.h'), 'utf8');
    const weak = [...header.matchAll(/^#pragma weak (\w+)$/gm)].map((m) => m[1]);
    assert.ok(weak.includes('OSSL_QUIC_server_method') && weak.length >= 20, weak.join(', '));
    for (const fn of weak) {
      if (kind.has(fn)) assert.strictEqual(kind.get(fn), 'w', `${fn}: ${kind.get(fn)}`);
    }
    for (const fn of ['OSSL_QUIC_server_method', 'SSL_new_listener', 'SSL_accept_connection',
      'SSL_get_accept_connection_queue_len', 'SSL_accept_stream', 'SSL_new_stream', 'SSL_handle_events',
      'SSL_get_event_timeout', 'SSL_write_ex2', 'SSL_stream_conclude', 'SSL_shutdown_ex',
      'SSL_get_stream_write_error_code']) {
      assert.strictEqual(kind.get(fn), 'w', `${fn}: ${kind.get(fn)}`);
    }
    // Functions OpenSSL 3.0 has are ordinary (strong) references.
    assert.strictEqual(kind.get('SSL_read_ex'), 'U');
  });

  it("where HTTP/3 is available, OSSL_QUIC_server_method is node's own (dladdr)", function () {
    if (!binding.http3.available) this.skip();
    const v = process.config.variables.node_shared_openssl;
    const shared = v === true || v === 'true';
    if (shared) {
      assert.match(binding.http3.library, /libssl\.so/);
    } else {
      assert.strictEqual(binding.http3.inExecutable, true, JSON.stringify(binding.http3));
    }
  });

  it('no QUIC library is mapped into the process', function () {
    const maps = fs.readFileSync('/proc/self/maps', 'utf8');
    assert.doesNotMatch(maps, /ngtcp2|nghttp3|msquic|quictls|gnutls/);
  });
});
