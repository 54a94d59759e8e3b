'use strict';

// The WebSocket server implementations the websocket_*.test.js files run
// the frameworks with: ws's WebSocketServer (on node:http and on sluice)
// and sluice.WebSocketServer (on sluice), once sluice exports it. Until
// then its runs are skipped with the reason printed.

const common = require('../common');
const { servers, sluice } = require('./helpers');

const wsServer = require('ws').WebSocketServer;

function sluiceEngineMissing() {
  if (typeof sluice.WebSocketServer !== 'function') return 'sluice has no WebSocketServer yet';
  return null;
}

// [{ title, impl (helpers.servers entry), engine: { name, WebSocketServer } | null, skip }]
function combos() {
  const out = [];
  for (const impl of servers) out.push({ impl, engine: { name: 'ws', WebSocketServer: wsServer } });
  if (common.isSluice) {
    const impl = servers.find((s) => s.isSluice);
    const skip = sluiceEngineMissing();
    out.push({ impl, engine: skip ? null : { name: 'sluice.WebSocketServer', WebSocketServer: sluice.WebSocketServer }, skip });
  }
  return out.map((c) => ({ ...c, title: `${c.engine ? c.engine.name : 'sluice.WebSocketServer'} on ${c.impl.name}` }));
}

// describe() per (server, WebSocket implementation); fn(impl, engine).
function forEachWsEngine(title, fn) {
  for (const c of combos()) {
    describe(`${title} [${c.title}]${c.engine && c.engine.name !== 'ws' ? ' [sluice-only]' : ''}`, function () {
      this.timeout(60000);
      afterEach(common.cleanup);
      if (!c.engine) {
        it(`skipped: ${c.skip}`, function () {
          console.log(`      skipped: ${c.skip}`);
          this.skip();
        });
        return;
      }
      fn(c.impl, c.engine);
    });
  }
}

// Resolves with the next `event` of `emitter` (args array), with a deadline.
function next(emitter, event, ms = 10000) {
  return common.once(emitter, event, ms, `'${event}'`);
}

module.exports = { forEachWsEngine, next, wsServer };
