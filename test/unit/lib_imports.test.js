'use strict';

// The shape of lib/'s import graph (docs/architecture.md, "lib/"): every
// relative require resolves, no file reaches itself through its requires
// (lazy requires inside functions count too), and each folder requires only
// the folders below it in LAYERS — so the protocol folders, which share a
// layer, never require each other. And tests outside test/unit/ reach lib/
// internals only through test/common.js's libInternal().

const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');
const LIB = path.join(ROOT, 'lib');

// Bottom to top; a folder may require its own files and those of any
// folder in an earlier layer. '.' is lib/index.js, the package entry.
const LAYERS = [
  ['common'],
  ['uploads', 'compress', 'net', 'websocket/pubsub'],
  ['files'],
  ['observe'],
  ['http'],
  ['http1', 'http2', 'websocket', 'http3'],
  ['middleware'],
  ['server'],
  ['tls'],
  ['.'],
];

function rankOf(folder) {
  const i = LAYERS.findIndex((layer) => layer.includes(folder));
  return i;
}

// Every `require('<relative path>')` in a file's text, comments excepted.
function relativeRequires(text) {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(/require\(\s*'(\.{1,2}\/[^']*)'\s*\)/g)].map((m) => m[1]);
}

function libGraph() {
  const files = fs.readdirSync(LIB, { recursive: true }).filter((f) => f.endsWith('.js'));
  const graph = new Map();
  const problems = [];
  for (const f of files) {
    const deps = [];
    for (const spec of relativeRequires(fs.readFileSync(path.join(LIB, f), 'utf8'))) {
      const abs = path.resolve(LIB, path.dirname(f), spec);
      if (!abs.startsWith(LIB + path.sep)) continue;  // ../package.json
      let target;
      try {
        target = path.relative(LIB, require.resolve(abs));
      } catch {
        problems.push(`${f}: require('${spec}') does not resolve`);
        continue;
      }
      deps.push(target);
    }
    graph.set(f, deps);
  }
  return { graph, problems };
}

// The cycles of `graph`, each as the path that closes it (a -> b -> a).
function findCycles(graph) {
  const cycles = [];
  const state = new Map();  // 1: on the DFS stack, 2: done
  const stack = [];
  function visit(n) {
    state.set(n, 1);
    stack.push(n);
    for (const d of graph.get(n) || []) {
      if (state.get(d) === 1) cycles.push([...stack.slice(stack.indexOf(d)), d].join(' -> '));
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(n, 2);
  }
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return cycles;
}

function layerViolations(graph) {
  const out = [];
  for (const [f, deps] of graph) {
    const from = path.dirname(f);
    for (const d of deps) {
      const to = path.dirname(d);
      if (to === from) continue;
      const rf = rankOf(from);
      const rt = rankOf(to);
      if (rf === -1) out.push(`${f}: its folder ${from}/ is in no layer`);
      else if (rt === -1) out.push(`${f} -> ${d}: ${to}/ is in no layer`);
      else if (rt >= rf) out.push(`${f} -> ${d}: ${from}/ may not require ${to}/`);
    }
  }
  return out;
}

describe('lib/ import graph', function () {
  it('every relative require resolves, and lib/ has its folders', () => {
    const { graph, problems } = libGraph();
    assert.deepStrictEqual(problems, []);
    assert.ok(graph.size > 20, `read ${graph.size} files`);
    assert.ok([...graph.keys()].some((f) => f.includes(path.sep)), 'lib/ is read with its folders');
  });

  it('has no import circle', () => {
    assert.deepStrictEqual(findCycles(libGraph().graph), []);
  });

  it('each folder requires only the folders below it (protocols never each other)', () => {
    assert.deepStrictEqual(layerViolations(libGraph().graph), []);
  });

  it('the checks find a circle and a layer breach when there is one', () => {
    const g = new Map([
      ['http/request.js', ['http/prototype_bridge.js']],
      ['http/prototype_bridge.js', ['http/response.js']],
      ['http/response.js', ['http/request.js']],
      ['http2/session.js', ['http1/session.js']],
      ['http1/session.js', []],
    ]);
    assert.deepStrictEqual(findCycles(g),
      ['http/request.js -> http/prototype_bridge.js -> http/response.js -> http/request.js']);
    assert.deepStrictEqual(layerViolations(g),
      ['http2/session.js -> http1/session.js: http2/ may not require http1/']);
  });

  it('tests outside test/unit/ require no lib/ internal by path (test/common.js libInternal)', () => {
    const testDir = path.join(ROOT, 'test');
    const hits = [];
    for (const f of fs.readdirSync(testDir, { recursive: true })) {
      if (!f.endsWith('.js') || f.startsWith('unit' + path.sep) || f.startsWith('node-compat' + path.sep + 'cache')) continue;
      if (f === 'common.js') continue;
      const text = fs.readFileSync(path.join(testDir, f), 'utf8');
      for (const m of text.matchAll(/require\(\s*['"`]([^'"`]*\blib\/[^'"`]*)['"`]\s*\)/g)) {
        if (m[1] === '../lib' || m[1] === './lib') continue;
        // Only the package's own lib/ (benchmark/lib/ is tooling).
        const target = path.resolve(testDir, path.dirname(f), m[1]);
        if (m[1].startsWith('.') && !target.startsWith(LIB + path.sep)) continue;
        hits.push(`test/${f}: require('${m[1]}')`);
      }
    }
    assert.deepStrictEqual(hits, []);
  });
});
