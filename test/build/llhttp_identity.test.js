'use strict';

// The node binary exports its own llhttp (9.x). If the addon's copy (8.1.0,
// from Debian's node-llhttp) were not compiled with hidden visibility, the
// dynamic linker would bind our calls to node's functions, which would
// write past our 8.1.0-sized structs and break parsing. These tests prove
// the addon runs its own copy.

const assert = require('assert');
const { execFileSync } = require('child_process');
const path = require('path');
const fs = require('fs');
const common = require('../common');

const addon = path.join(__dirname, '..', '..', 'build', 'Release', 'sluice.node');

describe('build: llhttp inside the addon', function () {
  before(function () {
    if (common.implName !== 'sluice') this.skip();
  });

  it('reports the llhttp it was compiled with, which differs from node\'s', function () {
    const sluice = require('../..');
    const header = fs.readFileSync('/usr/share/include/llhttp/llhttp.h', 'utf8');
    const v = ['MAJOR', 'MINOR', 'PATCH'].map((k) =>
      header.match(new RegExp(`LLHTTP_VERSION_${k} (\\d+)`))[1]).join('.');
    assert.strictEqual(sluice.versions.llhttp, v);
    assert.notStrictEqual(sluice.versions.llhttp, process.versions.llhttp,
      'test premise: node bundles a different llhttp');
  });

  it('exports no llhttp symbol (nothing to interpose) and only the N-API entry points', function () {
    let out;
    try {
      out = execFileSync('nm', ['-D', '--defined-only', addon], { encoding: 'utf8' });
    } catch (e) {
      this.skip(); // binutils missing
    }
    const exported = out.split('\n').filter(Boolean).map((l) => l.trim().split(/\s+/).pop());
    assert.deepStrictEqual(exported.filter((s) => /llhttp/.test(s)), []);
    assert.ok(exported.includes('napi_register_module_v1'));
    assert.ok(exported.length < 10, `unexpected exports: ${exported.join(' ')}`);
  });

  it('resolves llhttp calls inside the addon (no PLT import of llhttp_*)', function () {
    let out;
    try {
      out = execFileSync('nm', ['-D', '--undefined-only', addon], { encoding: 'utf8' });
    } catch (e) {
      this.skip();
    }
    assert.ok(!/llhttp/.test(out), `llhttp symbols imported: ${out.match(/.*llhttp.*/g)}`);
  });
});
