'use strict';
// Child process bookkeeping of the runner: every child is tracked and
// killed when the runner exits, whatever the reason (normal end, exception,
// SIGINT, SIGTERM). Server children also get a stdin pipe and exit on its
// EOF, so even a runner killed with SIGKILL leaves nothing behind.

const children = new Set();

function track(child, { group = false } = {}) {
  child.killGroup = group; // detached child: kill its whole process group
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function killChild(child, signal) {
  try {
    if (child.killGroup) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch { /* already gone */ }
}

function killAll(signal = 'SIGKILL') {
  for (const child of children) killChild(child, signal);
}

let handlersInstalled = false;
function installExitHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => killAll('SIGKILL'));
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`\n${sig}: stopping benchmark, killing ${children.size} child process(es)\n`);
      killAll('SIGKILL');
      process.exit(sig === 'SIGINT' ? 130 : 143);
    });
  }
}

module.exports = { track, killChild, killAll, installExitHandlers };
