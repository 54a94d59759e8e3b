'use strict';

// Runs conformance cases against one echo server and judges each as
// Autobahn does: OK, NON-STRICT (allowed by the RFC, not its strict form),
// INFORMATIONAL (the RFC leaves it open; reported, never a failure), or
// FAILED (with the reason). See cases.js for what each case expects.

const { open, parseExtensions, checkDeflateAnswer, h2Session } = require('./client');
const { PROBE } = require('./cases');

const OK = 'OK';
const NON_STRICT = 'NON-STRICT';
const FAILED = 'FAILED';
const INFO = 'INFORMATIONAL';

const isData = (e) => e.type === 'text' || e.type === 'binary' || (e.type === 'pong' && !e.data.equals(PROBE));
const sameEvent = (a, b) => a.type === b.type && a.data.equals(b.data);
const show = (e) => (e ? `${e.type}(${e.data.length} B${e.data.length <= 24 ? ` ${JSON.stringify(e.data.toString('latin1'))}` : ''})` : 'nothing');

// Runs one case; resolves { id, result, reason, ms }. Never rejects.
async function runCase(target, kase, { timeout = 15000 } = {}) {
  const t0 = Date.now();
  const T = kase.big ? timeout * 4 : timeout;
  const done = (result, reason = '') => ({ id: kase.id, title: kase.title, result, reason, ms: Date.now() - t0 });
  let res;
  try {
    res = await open(target, { extensions: kase.offer, timeout: T });
  } catch (e) {
    if (e.code === 'NO_RFC8441') throw e;
    return done(FAILED, `handshake: ${e.message}`);
  }
  if (res.refused) {
    if (kase.declineOnly && res.status === 400) return done(OK, 'offer refused with 400');
    return done(FAILED, `handshake answered ${res.status}`);
  }
  const c = res.conn;
  try {
    const notes = [];
    const ctx = { timeout: T, nonStrict: (why) => notes.push(why) };
    if (kase.offer) {
      const offers = parseExtensions(kase.offer).filter((o) => o.name === 'permessage-deflate');
      const answers = parseExtensions(res.headers['sec-websocket-extensions']);
      const pmd = answers.filter((a) => a.name === 'permessage-deflate');
      if (answers.length !== pmd.length) return done(FAILED, `server accepted an extension not offered: ${res.headers['sec-websocket-extensions']}`);
      if (pmd.length > 1) return done(FAILED, 'permessage-deflate accepted twice');
      if (pmd.length === 1) {
        if (kase.declineOnly) return done(FAILED, `accepted the invalid offer with "${res.headers['sec-websocket-extensions']}"`);
        const bad = checkDeflateAnswer(offers, pmd[0]);
        if (bad) return done(FAILED, `permessage-deflate answer "${res.headers['sec-websocket-extensions']}": ${bad}`);
        const p = pmd[0].params;
        c.deflate = {
          serverNoContextTakeover: !!p.server_no_context_takeover,
          clientNoContextTakeover: !!p.client_no_context_takeover,
          serverMaxWindowBits: p.server_max_window_bits ? Number(p.server_max_window_bits) : 15,
          clientMaxWindowBits: p.client_max_window_bits ? Number(p.client_max_window_bits) : 15,
        };
      } else if (kase.requireDeflate) {
        return done(FAILED, 'permessage-deflate offered validly but not accepted');
      } else if (!kase.declineOnly) {
        return done(FAILED, 'permessage-deflate not accepted (the echo server enables it)');
      }
    } else if (res.headers['sec-websocket-extensions']) {
      return done(FAILED, `extension accepted without an offer: ${res.headers['sec-websocket-extensions']}`);
    }

    await kase.run(c, ctx);
    const then = kase.then;
    const ended = (ev) => ev.some((e) => e.type === 'end' || e.type === 'protocol');
    if (then.close !== undefined) {
      const want = kase.expect.length;
      await c.waitUntil((ev) => ended(ev) || ev.some((e) => e.type === 'close') || ev.filter(isData).length >= want, T);
      if (!c.has('close') && !c.has('end')) {
        c.closedAt = c.events.length;
        c.sendClose(then.close);
      }
    }
    await c.waitUntil(ended, T);
    return judge(kase, c, notes, done);
  } catch (e) {
    return done(FAILED, `runner: ${e.stack}`);
  } finally {
    c.destroy();
  }
}

function judge(kase, c, notes, done) {
  const ev = c.events;
  const proto = ev.find((e) => e.type === 'protocol');
  if (proto) return done(FAILED, `server broke the protocol: ${proto.error}`);
  const data = ev.filter(isData);
  const expect = kase.expect;
  const closeIdx = ev.findIndex((e) => e.type === 'close');
  const close = ev[closeIdx];
  const end = ev.some((e) => e.type === 'end');
  const then = kase.then;
  const verdict = (result, reason) => {
    if (result === OK && notes.length) return done(NON_STRICT, notes.join('; '));
    if (kase.informational && result !== OK) return done(INFO, reason);
    return done(result, reason);
  };
  let prefix = 0;
  while (prefix < data.length && prefix < expect.length && sameEvent(data[prefix], expect[prefix])) prefix++;

  if (then.close !== undefined) {
    if (then.policy && close && data.length === 0 && then.policy.includes(close.code) && (c.closedAt === undefined || closeIdx < c.closedAt)) {
      return done(INFO, `refused by a server limit: close ${close.code} ${JSON.stringify(close.reason.toString())}`);
    }
    if (prefix !== data.length || data.length !== expect.length) {
      return verdict(FAILED, `expected ${expect.length} messages/pongs, got ${data.length}; first difference at #${prefix}: ` +
        `got ${show(data[prefix])}, expected ${show(expect[prefix])}`);
    }
    if (!close) return verdict(FAILED, end ? 'connection dropped without a close frame' : 'no close frame within the deadline');
    if (c.closedAt === undefined || closeIdx < c.closedAt) {
      return verdict(FAILED, `server closed first (code ${close.code} ${JSON.stringify(close.reason.toString())})`);
    }
    if (!end) return verdict(FAILED, 'closing handshake done but the server did not close the connection');
    if (close.code === then.close) return verdict(OK);
    return verdict(FAILED, `close answered with ${close.code}, expected ${then.close}`);
  }
  if (then.fail) {
    if (prefix !== data.length) {
      return verdict(FAILED, `got ${show(data[prefix])} where ${show(expect[prefix])} or the failure was expected`);
    }
    if (!end) return verdict(FAILED, close ? `close ${close.code} but the connection stayed open` : 'the connection was not failed');
    if (data.length < expect.length) notes.push(`failed after ${data.length} of ${expect.length} expected replies`);
    if (!close) return verdict(NON_STRICT, ['dropped the connection without a close frame', ...notes].join('; '));
    if (then.fail.includes(close.code)) return verdict(OK);
    return verdict(NON_STRICT, [`failed with code ${close.code}, expected ${then.fail.join(' or ')}`, ...notes].join('; '));
  }
  if (then.echoClose !== undefined) {
    if (prefix !== data.length || data.length !== expect.length) {
      return verdict(FAILED, `expected ${expect.length} messages/pongs, got ${data.length}: ${show(data[prefix])}`);
    }
    if (!close) return verdict(FAILED, end ? 'connection dropped without a close frame' : 'no close frame within the deadline');
    if (!end) return verdict(FAILED, 'close answered but the connection stayed open');
    if (close.code === then.echoClose) return verdict(OK);
    if ((then.also || []).includes(close.code)) return verdict(NON_STRICT, `answered close with ${close.code}, strictly ${then.echoClose}`);
    return verdict(FAILED, `answered close with ${close.code}, expected ${then.echoClose}`);
  }
  return verdict(FAILED, 'case without an expectation');
}

// Runs `cases` against `target` with `concurrency` connections at a time
// (cases marked big run alone). Resolves the results in case order.
async function runAll(target, cases, { concurrency = 4, timeout, onResult } = {}) {
  // RFC 8441 targets: one session first; a server without
  // SETTINGS_ENABLE_CONNECT_PROTOCOL rejects here (code NO_RFC8441),
  // before any case runs.
  if (target.mode === 'h2' || target.mode === 'h2c') await h2Session(target, timeout || 15000);
  const results = new Array(cases.length);
  const small = [];
  const big = [];
  cases.forEach((k, i) => (k.big ? big : small).push(i));
  let next = 0;
  const worker = async () => {
    while (next < small.length) {
      const i = small[next++];
      results[i] = await runCase(target, cases[i], { timeout });
      if (onResult) onResult(results[i], cases[i]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  for (const i of big) {
    results[i] = await runCase(target, cases[i], { timeout });
    if (onResult) onResult(results[i], cases[i]);
  }
  return results;
}

// { OK: n, 'NON-STRICT': n, INFORMATIONAL: n, FAILED: n }, and per group.
function summarize(results) {
  const total = { [OK]: 0, [NON_STRICT]: 0, [INFO]: 0, [FAILED]: 0 };
  const groups = {};
  for (const r of results) {
    total[r.result]++;
    const g = r.id.split('.')[0];
    groups[g] = groups[g] || { [OK]: 0, [NON_STRICT]: 0, [INFO]: 0, [FAILED]: 0 };
    groups[g][r.result]++;
  }
  return { total, groups };
}

module.exports = { runCase, runAll, summarize, OK, NON_STRICT, FAILED, INFO };
