'use strict';

// README.md's Development section opens with the two commands that set up
// a Debian machine and test sluice; CI (.ci/run) must run exactly those:
// the same apt packages, in the same order, and `npm ci` then the README's
// test command.

const fs = require('fs');
const path = require('path');
const common = require('../common');
const { assert } = common;

function readmeSetup() {
  const text = fs.readFileSync(path.join(common.ROOT, 'README.md'), 'utf8');
  const dev = text.slice(text.indexOf('\n## Development\n'));
  const m = /```sh\n([\s\S]*?)\n```/.exec(dev);
  assert.ok(m, 'README.md: no sh block under "## Development"');
  return m[1].split('\n');
}

// The packages of the first `apt-get install` in a script or a line.
function aptPackages(text) {
  const joined = text.replace(/\\\n\s*/g, ' ');
  const m = /apt-get install -y(?: -qq)? ([^\n&>]+)/.exec(joined);
  assert.ok(m, 'no apt-get install line');
  return m[1].trim().split(/\s+/);
}

describe('README.md Development: the setup and test commands are what CI runs', function () {
  it('two lines: the apt line of .ci/run, then npm ci && npm test', () => {
    const lines = readmeSetup();
    assert.strictEqual(lines.length, 2, lines.join('\n'));
    const ci = fs.readFileSync(path.join(common.ROOT, '.ci', 'run'), 'utf8');
    assert.deepStrictEqual(aptPackages(lines[0]), aptPackages(ci));
    assert.match(lines[0], /^S=\$\(command -v sudo\); \$S apt-get update && \$S apt-get install -y /);
    assert.strictEqual(lines[1], 'npm ci && npm test');
    const ciLines = ci.split('\n').map((l) => l.trim());
    const i = ciLines.indexOf('npm ci');
    assert.ok(i >= 0 && ciLines[i + 1] === 'npm test', '.ci/run runs npm ci then npm test');
    const pkg = require(path.join(common.ROOT, 'package.json'));
    assert.strictEqual(pkg.scripts.test, 'mocha');
  });
});
