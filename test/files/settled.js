'use strict';

// Leak checks for the native file responses: the process's fd count and
// the addon's live FileSource count (NativeFile.stats()).

const fs = require('node:fs');
const common = require('../common');

function fdCount() {
  return fs.readdirSync('/proc/self/fd').length;
}

// Waits until every native file source is gone (their fds closed: a close
// is an async threadpool request, so it may land a moment after the
// response) and the fd count is back to `before`; resolves
// { sources, buffersOutstanding, fds } as they are then (also on timeout).
async function settled(before, ms = 3000) {
  const binding = common.libInternal('common/binding');
  const deadline = Date.now() + ms;
  for (;;) {
    const st = binding.NativeFile.stats();
    const n = fdCount();
    if ((st.sources === 0 && n <= before) || Date.now() > deadline) return { ...st, fds: n };
    await common.sleep(20);
  }
}

module.exports = { fdCount, settled };
