'use strict';

// node's HTTP/2 server tests left out of the N/M count of run.js --http2,
// with the reason (test/node-compat/README.md). As excluded.js: only tests
// that reach into node internals a different server cannot have, or that
// exercise a documented refusal (docs/http2.md). Tests whose `// Flags:`
// line has --expose-internals are left out by run.js itself.
module.exports = {
};
