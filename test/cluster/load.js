'use strict';
// Continuous load for the rolling-restart tests: `concurrency` loops each
// sending GET / on a new connection (agent: false, Connection: close) until
// stop(). Counts answers per body (the answering worker's id) per round
// (nextRound() starts a new one), and failures by error code.

const http = require('node:http');

function startLoad(port, { concurrency = 4 } = {}) {
  const stats = { ok: 0, failed: 0, errors: {}, perRound: [{}] };
  let running = true;
  const fail = (code) => {
    stats.failed++;
    stats.errors[code] = (stats.errors[code] || 0) + 1;
  };
  const one = () => new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false, headers: { connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('error', (err) => { fail(err.code || err.message); resolve(); });
      res.on('end', () => {
        if (res.statusCode !== 200) {
          fail(`status ${res.statusCode}`);
        } else {
          stats.ok++;
          const round = stats.perRound[stats.perRound.length - 1];
          round[body] = (round[body] || 0) + 1;
        }
        resolve();
      });
    });
    req.setTimeout(10000, () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err) => { fail(err.code || err.message); resolve(); });
  });
  const loops = [];
  for (let i = 0; i < concurrency; i++) loops.push((async () => { while (running) await one(); })());
  return {
    stats,
    nextRound() { stats.perRound.push({}); },
    async stop() {
      running = false;
      await Promise.all(loops);
      return stats;
    },
  };
}

module.exports = { startLoad };
