// Every line after a `@ts-expect-error` must fail to compile: a misuse the
// declarations have to reject. tsc reports an unused directive as an error,
// so `npm run test:types` fails if any of these starts compiling; and
// test/types/types.test.js strips the directives and checks that each of
// these lines really is an error (not a typo elsewhere).
import * as sluice from 'sluice';

// @ts-expect-error: unknown option
sluice.createServer({ maxHeadersSize: 1 });
// @ts-expect-error: validMs is a number of ms
sluice.createServer({ openFileCache: { validMs: '60s' } });
// @ts-expect-error: a timeout is a number
sluice.createServer({ keepAliveTimeout: '5s' });
// @ts-expect-error: not an encoding sluice knows
sluice.createServer({ compression: { encodings: ['zstd'] } });
// @ts-expect-error: an allocator gives memory, not a string
sluice.createServer({ requestBufferAllocator: (size: number) => 'x'.repeat(size) });
// @ts-expect-error: http2 settings are numbers
sluice.createServer({ http2: { maxConcurrentStreams: 'many' } });
sluice.createServer((req, res) => {
  // @ts-expect-error: req.url is a string
  const n: number = req.url;
  // @ts-expect-error: res.statusCode is a number
  res.statusCode = '200';
  return n;
});

const server = sluice.createServer();
server.on('request', (req, res) => {
  // @ts-expect-error: 'request' gets (req, res): req.method is a string
  const m: number = req.method;
  return [m, res];
});
// @ts-expect-error: 'stream' gets a stream, whose id is a number
server.on('stream', (stream) => { const id: string = stream.id; return id; });
server.on('clientError', (err, socket) => {
  // @ts-expect-error: 'clientError' gives an Error whose code is a string
  const c: number = err.code;
  // @ts-expect-error: and a SluiceSocket, whose remotePort may be undefined
  const p: number = socket.remotePort;
  return [c, p];
});
// @ts-expect-error: listen takes a port number or options
server.listen({ port: 'eighty' });
// @ts-expect-error: reusePort is a boolean
server.listen({ port: 80, reusePort: 1 });
// @ts-expect-error: address() may be null before listen
server.address().port;

server.on('request', (req, res) => {
  // @ts-expect-error: respondWithFile options are typed
  res.respondWithFile('/f', {}, { offset: 'start' });
  // @ts-expect-error: respondWithFD takes an fd or a FileHandle, not a path
  res.respondWithFD('/f');
  // @ts-expect-error: no such method
  res.respondWithStream();
  // @ts-expect-error: compress is a boolean
  res.compress = 'no';
  return req;
});

server.on('stream', (stream) => {
  // @ts-expect-error: respond options are typed
  stream.respond({ ':status': 200 }, { endStream: 'yes' });
  // @ts-expect-error: close takes a numeric code
  stream.close('CANCEL');
  // @ts-expect-error: precompressed applies to paths, not file descriptors
  stream.respondWithFD(3, {}, { precompressed: true });
});

// @ts-expect-error: pool options are numbers
sluice.createBufferPool({ bufferSize: '64k' });
const pool = sluice.createBufferPool();
// @ts-expect-error: stats are read-only data, not a function to replace
pool.stats = () => ({ bufferSize: 1, maxBuffers: 1, allocated: 0, inUse: 0 });
// @ts-expect-error: alloc may return undefined when the pool is dry
const buf: Buffer = pool.alloc();
// @ts-expect-error: versions are read-only
sluice.versions.sluice = '9';
// @ts-expect-error: no such export
sluice.createSecureServerr();
void buf;
// @ts-expect-error: allowHTTP1 is a boolean
sluice.createSecureServer({ allowHTTP1: 'yes' });
// @ts-expect-error: ALPN offers only the protocols sluice speaks
sluice.createSecureServer({ ALPNProtocols: ['spdy/3'] });
// @ts-expect-error: dotfiles is 'ignore' | 'deny' | 'allow'
sluice.createServer().serveStatic('/', '/srv', { dotfiles: 'hide' });
// @ts-expect-error: fallthrough is a boolean
sluice.serveStatic('/srv', { fallthrough: 'yes' });
// @ts-expect-error: setHeaders is the middleware's (a native mount runs no JS)
sluice.createServer().serveStatic('/', '/srv', { setHeaders: () => {} });
