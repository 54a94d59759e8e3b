'use strict';
// The machine the benchmark runs on: the loopback address all traffic uses,
// tools on PATH, clock ticks, CPUs.

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const HOST = '127.0.0.1'; // all benchmark traffic stays on loopback

const toolCache = new Map();
function hasTool(name) {
  if (!toolCache.has(name)) {
    let found = false;
    for (const dir of (process.env.PATH || '').split(':')) {
      if (!dir) continue;
      try {
        fs.accessSync(path.join(dir, name), fs.constants.X_OK);
        found = true;
        break;
      } catch { /* next */ }
    }
    toolCache.set(name, found);
  }
  return toolCache.get(name);
}

let clkTck;
function clockTicks() {
  if (clkTck === undefined) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    } catch {
      clkTck = 100;
    }
    if (!(clkTck > 0)) clkTck = 100;
  }
  return clkTck;
}

function cpuCount() {
  try {
    return require('node:os').availableParallelism();
  } catch {
    return require('node:os').cpus().length;
  }
}

module.exports = { HOST, hasTool, clockTicks, cpuCount };
