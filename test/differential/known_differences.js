'use strict';

// The deliberate differences between sluice and node:http on HTTP/1.1
// input: the table in docs/security.md ("Deliberate differences") says
// what and why, one row per id; this file knows how to recognise each in
// a fuzz case. Every one is sluice being stricter: sluice dispatches a
// prefix of what node dispatched (it stops at the input node reads
// further), never a request node did not see. Any other difference is a
// failure. `docIds()` reads the table so a test can hold the two in step.

const fs = require('node:fs');
const path = require('node:path');

const DOC = path.resolve(__dirname, '..', '..', 'docs', 'security.md');

// sluice saw a prefix of node's requests: the same ones, in order, except
// that the last one sluice saw may have been cut short in its body (sluice
// refused a chunk line node accepted).
function sluiceStopsEarlier(node, ours) {
  const n = node.requests;
  const s = ours.requests;
  if (s.length > n.length) return false;
  for (let i = 0; i < s.length; i++) {
    const a = n[i];
    const b = s[i];
    const head = (r) => JSON.stringify([r.method, r.url, r.version, r.headers]);
    if (head(a) !== head(b)) return false;
    if (JSON.stringify(a) === JSON.stringify(b)) continue;
    // Only the last one may differ, and only by ending early.
    if (i !== s.length - 1 || b.ended || !a.body.startsWith(b.body)) return false;
  }
  return s.length < n.length || JSON.stringify(n) !== JSON.stringify(s);
}

// Request heads in the wire, roughly (for recognising features of a case;
// the parsers decide what the bytes mean).
function heads(wire) {
  return wire.split(/\r\n\r\n/).map((h) => h.replace(/^[\s\S]*?(?=[A-Za-z-]+ \S+ HTTP\/)/, ''));
}

const MATCHERS = {
  // llhttp 8.1 does not know the QUERY method (llhttp 9 added it).
  // A QUERY request line anywhere (also right after a body, which the
  // grammar's pipelined tails put with no line break in front), with any
  // number of spaces before the target and before the version, as both
  // llhttp versions allow.
  'query-method': (wire) => /QUERY +\S* +HTTP\/1\.[01]\r\n/.test(wire),
  // llhttp 8.1 refuses a chunk extension after one with an unquoted value.
  'chunk-ext-after-unquoted-value': (wire) => /\r\n[0-9a-fA-F]+(;[^\r\n]*)?;[^;"\r\n]*=[^;"\r\n]*;/.test(wire),
  // llhttp 8.1 refuses a quoted-pair (backslash) in a quoted extension value.
  'chunk-ext-quoted-pair': (wire) => /;[^;\r\n]*="[^"\r\n]*\\/.test(wire),
  // An empty Transfer-Encoding (head or trailers): sluice answers 400 as
  // node 22+ (llhttp 9.4) does; node 20 (llhttp 9.3) ignores it.
  'empty-transfer-encoding': (wire) => /\ntransfer-encoding:[ \t]*\r?\n/i.test(wire),
  // Content-Length followed by whitespace with a tab ("5\t"): llhttp 8.1
  // and 9.3 refuse it, node 22+ (llhttp 9.4) accepts it.
  'content-length-trailing-tab': (wire) => /\ncontent-length:[ \t]*\d+ *\t[ \t]*\r\n/i.test(wire),
  // "Connection: close" with a tab after the token: sluice closes after
  // that request as node 22+ (llhttp 9.4) does; node 20 (llhttp 9.3)
  // does not read it as close and serves what is pipelined behind it.
  'connection-close-trailing-tab': (wire) => /\nconnection:[^\r\n]*close *\t[ \t]*(,|\r\n)/i.test(wire),
  // HTTP/1.0 with "Connection: keep-alive" and a tab after the token: node
  // 22+ keeps the connection and serves what is pipelined; sluice, like
  // node 20, does not read it as keep-alive and closes after the response.
  'keep-alive-trailing-tab': (wire) => / HTTP\/1\.0\r\n/.test(wire) &&
    /\nconnection:[^\r\n]*keep-alive *\t[ \t]*(,|\r\n)/i.test(wire),
  // An HTTP/1.1 request without Host: both answer 400 and close, but node
  // has already parsed (and dispatched) what was pipelined behind it.
  'no-host-then-pipelined': (wire) => heads(wire).some((h) => /^[^\r\n]* HTTP\/1\.1(\r\n|$)/.test(h) &&
    !/\r\nhost:/i.test(`\r\n${h.split('\r\n').slice(1).join('\r\n')}`)),
  // Both send the same error answers and nothing else (the wire is the
  // same), but node's handler was also given requests parsed behind the
  // refused one, which it never answers.
  'same-error-answers': (wire, node, ours) => ours.statuses.length > 0 &&
    JSON.stringify(ours.statuses) === JSON.stringify(node.statuses) &&
    ours.statuses.every((st) => st >= 400),
};

// The id of the deliberate difference that explains a case, or null.
function explain(wire, node, ours) {
  if (!sluiceStopsEarlier(node, ours)) return null;
  for (const id of Object.keys(MATCHERS)) {
    if (MATCHERS[id](wire, node, ours)) return id;
  }
  return null;
}

// The ids of docs/security.md's "Deliberate differences" table (first
// column, in backticks).
function docIds() {
  const text = fs.readFileSync(DOC, 'utf8');
  const start = text.indexOf('## Deliberate differences');
  if (start < 0) return [];
  const section = text.slice(start).split(/\n## /)[0];
  const ids = [];
  for (const line of section.split('\n')) {
    const m = /^\|\s*`([a-z0-9-]+)`\s*\|/.exec(line);
    if (m) ids.push(m[1]);
  }
  return ids;
}

module.exports = { explain, docIds, MATCHERS, sluiceStopsEarlier };
