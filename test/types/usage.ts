// Uses every public API of sluice as a TypeScript user would; must compile
// with `strict` (npm run test:types). Never run: types only.
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as tls from 'node:tls';
import * as sluice from 'sluice';
import {
  createServer, createBufferPool, releaseBuffer, BufferPool, Server, IncomingRequest, ServerResponse,
  ServerOptions, CompressionOptions, FileResponseOptions, ServerHttp2Stream, Http2SessionHandle,
  SluiceSocket, BufferPoolStats, FileStat, DropArgument, ClientError, OpenFileCacheOptions,
  OpenFileCacheStats,
} from 'sluice';

// ---- createServer overloads ----
const s0: Server = createServer();
const s1: Server = createServer((req, res) => {
  const m: string = req.method;
  const u: string = req.url;
  res.end(`${m} ${u}`);
});
const pool: BufferPool = createBufferPool({ bufferSize: 65536, maxBuffers: 1024, poison: false });
const options: ServerOptions = {
  maxHeaderSize: 16384,
  headersTimeout: 60000,
  requestTimeout: 300000,
  keepAliveTimeout: 5000,
  highWaterMark: 65536,
  requestBufferAllocator: pool.alloc,
  maxHeadersCount: null,
  maxRequestBodySize: 1 << 20,
  maxRequestsPerSocket: 100,
  maxConnections: 1000,
  maxOutputBuffer: 16 << 20,
  requireHostHeader: true,
  joinDuplicateHeaders: true,
  compression: {
    encodings: ['br', 'gzip', 'deflate'],
    threshold: 1024,
    level: 6,
    brotliQuality: 4,
    filter: (req, res) => req.method !== 'HEAD' && res.statusCode === 200 && res.getHeader('content-type') !== 'image/png',
    maxBrotliStreams: 128,
  },
  http2: { maxConcurrentStreams: 256, initialWindowSize: 1 << 20, connectionWindowSize: 16 << 20 },
  settings: { maxConcurrentStreams: 100, initialWindowSize: 65535 },
};
const s2 = createServer(options, handler);
const s3 = new Server({ compression: true });
const s4 = new sluice.Server(handler);
s4.httpAllowHalfOpen = true;
const joined: boolean | undefined = s4.joinDuplicateHeaders;
createServer(null, handler);
createServer({ requestBufferAllocator: (size: number) => Buffer.allocUnsafe(size) });
createServer({ requestBufferAllocator: () => undefined });

function handler(req: IncomingRequest, res: ServerResponse): void {
  // node:http's IncomingMessage members
  const h: http.IncomingHttpHeaders = req.headers;
  const raw: string[] = req.rawHeaders;
  const v: string = req.httpVersion;
  const distinct: NodeJS.Dict<string[]> = req.headersDistinct;
  const addr: string | undefined = req.socket.remoteAddress;
  void [h, raw, v, distinct, addr, req.complete, req.aborted, req.trailers];
  req.on('data', (chunk: Buffer) => { releaseBuffer(chunk); pool.release(chunk); });
  req.on('end', () => {});
  req.on('aborted', () => {});
  req.setEncoding('utf8');
  req.pause();
  req.resume();

  // node:http's ServerResponse members
  res.statusCode = 200;
  res.statusMessage = 'OK';
  res.sendDate = true;
  res.setHeader('content-type', 'text/plain');
  res.setHeader('set-cookie', ['a=1', 'b=2']);
  res.appendHeader('vary', 'accept');
  const ct: number | string | string[] | undefined = res.getHeader('content-type');
  const all: http.OutgoingHttpHeaders = res.getHeaders();
  const names: string[] = res.getHeaderNames();
  void [ct, all, names, res.hasHeader('x'), res.headersSent, res.writableEnded, res.writableFinished];
  res.removeHeader('x');
  res.writeHead(200, 'OK', { 'x-a': '1' });
  res.writeHead(200, { 'x-a': '1' });
  res.writeHead(204, ['x-a', '1']);
  res.flushHeaders();
  res.writeContinue();
  res.addTrailers({ 'x-t': '1' });
  const ok: boolean = res.write('x');
  res.write(Buffer.from('x'), () => {});
  res.on('finish', () => {});
  res.on('close', () => {});
  res.on('drain', () => {});
  void ok;

  // sluice's additions
  res.compress = false;
  res.flush();
  const fileOpts: FileResponseOptions = {
    offset: 0,
    length: 100,
    statCheck(stat: FileStat, headers, statOptions) {
      headers['last-modified'] = stat.mtime.toUTCString();
      void statOptions.offset;
      return stat.isFile();
    },
    onError(err) { void err.code; },
  };
  res.respondWithFile('/etc/hostname', { 'content-type': 'text/plain', ':status': 200 }, { ...fileOpts, precompressed: true });
  res.respondWithFile(new URL('file:///etc/hostname'));
  res.respondWithFD(fs.openSync('/etc/hostname', 'r'), null, fileOpts);
  fs.promises.open('/etc/hostname').then((fh) => res.respondWithFD(fh, { 'content-type': 'text/plain' }));
  res.end('done', () => {});
}

// ---- Server members ----
const srv = s2;
srv.listen(8080, '127.0.0.1', 511, () => {});
srv.listen(8080, '127.0.0.1', () => {});
srv.listen(8080, () => {});
srv.listen(0);
srv.listen({ port: 0, host: '::1', backlog: 16 }, () => {});
srv.listen({ port: 8080, host: '0.0.0.0', reusePort: true });
srv.listen({ port: 8080, exclusive: true });
const a = srv.address();
if (a && typeof a !== 'string') { const p: number = a.port; const f: string = a.family; void [p, f, a.address]; }
const listening: boolean = srv.listening;
srv.maxConnections = 10;
srv.maxRequestBodySize = 1024;
srv.maxHeadersCount = 0;
srv.maxRequestsPerSocket = 0;
srv.maxOutputBuffer = 0;
srv.keepAliveTimeout = 1000;
srv.headersTimeout = 1000;
srv.requestTimeout = 2000;
srv.getConnections((err, n: number) => { void [err, n]; });
srv.setTimeout(1000, () => {});
srv.closeIdleConnections();
srv.closeAllConnections();
srv.ref().unref();
srv.close((err?: Error) => { void err; });
void srv[Symbol.asyncDispose]();
void [listening, srv._connections, s0, s1, s3, s4, joined];

// ---- Server events ----
srv.on('request', (req, res) => { res.end(req.url); });
srv.on('checkContinue', (req, res) => { res.writeContinue(); void req; });
srv.on('checkExpectation', (req, res) => { res.writeHead(417).end(); void req; });
srv.once('listening', () => {});
srv.on('close', () => {});
srv.on('error', (err) => { const code: string | undefined = err.code; void code; });
srv.on('clientError', (err: ClientError, socket: SluiceSocket) => {
  const code: string = err.code;
  void [code, err.statusCode, socket.remoteAddress, socket.remotePort, socket.remoteFamily];
  if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  else socket.destroy();
});
srv.on('clientError', (err: ClientError) => {
  const raw: Buffer | undefined = err.rawPacket;
  const parsed: number | undefined = err.bytesParsed;
  void [raw, parsed, err.reason];
});
srv.on('connection', (socket: SluiceSocket) => {
  socket.setKeepAlive(true, 60000);
  const counts: number[] = [socket.bytesRead, socket.bytesWritten];
  void [counts, socket.server];
});
srv.unref().ref();
const unixServer = createServer().listen('/tmp/sluice-types.sock', 511, () => {});
const where: net.AddressInfo | string | null = unixServer.address();
void [where, createServer().listen({ path: '/tmp/sluice-types-2.sock' })];
srv.on('drop', (data: DropArgument) => { void [data.remoteAddress, data.localPort]; });
srv.on('dropRequest', (req, socket) => { void [req.url, socket.localAddress]; });
srv.on('session', (session: Http2SessionHandle) => {
  session.on('goaway', (code: number, last: number) => { void [code, last]; });
  session.once('close', () => {});
  void [session.socket.remoteAddress, session.alpnProtocol];
});
srv.prependListener('request', () => {});
srv.addListener('timeout', () => {});

// ---- HTTP/2 stream API ----
srv.on('stream', (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => {
  const path = headers[':path'];
  void [flags, rawHeaders, stream.id, stream.pending, stream.closed, stream.aborted, stream.rstCode,
    stream.endAfterHeaders, stream.state.localClose, stream.bufferSize, stream.sentInfoHeaders];
  stream.on('data', (chunk) => { void chunk; });
  stream.on('trailers', (trailers, f) => { void [trailers['x-t'], f]; });
  stream.on('aborted', () => {});
  stream.on('error', (err) => { void err.message; });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'x-t': '1' }));
  if (path === '/file') {
    stream.respondWithFile('/etc/hostname', { 'content-type': 'text/plain' }, {
      statCheck: (stat, h) => { h['content-length'] = stat.size; },
      onError: () => stream.respond({ ':status': 404 }, { endStream: true }),
      waitForTrailers: false,
      precompressed: true,
      compress: false,
    });
    return;
  }
  if (path === '/fd') {
    stream.respondWithFD(fs.openSync('/etc/hostname', 'r'), { 'content-type': 'text/plain' }, { offset: 1, length: 2 });
    return;
  }
  stream.additionalHeaders({ ':status': 103, link: '</a.css>; rel=preload' });
  stream.respond({ ':status': 200, 'content-type': 'text/plain' }, { waitForTrailers: true, sendDate: true, compress: true });
  stream.write('a');
  stream.flush();
  stream.end('b');
  stream.setTimeout(1000, () => stream.close(http2.constants.NGHTTP2_CANCEL, () => {}));
  stream.session.goaway(0);
  stream.session.close(() => {});
  const sent: http2.OutgoingHttpHeaders | undefined = stream.sentHeaders;
  void sent;
});

// ---- code typed against node:http runs on sluice ----
const nodeListener: http.RequestListener = (req, res) => { res.end(req.url); };
createServer(nodeListener);
function takesNodeTypes(req: http.IncomingMessage, res: http.ServerResponse): void { void [req, res]; }
createServer(takesNodeTypes);
srv.on('request', takesNodeTypes);

// ---- buffer pools ----
const p2 = new BufferPool({ bufferSize: 4096 });
const b: Buffer | undefined = p2.alloc();
if (b) p2.release(b);
const st: BufferPoolStats = p2.stats();
void [st.allocated, st.inUse, st.bufferSize, st.maxBuffers];
const bare = pool.alloc; // bound: can be passed on bare
createServer({ requestBufferAllocator: bare });
releaseBuffer('not pool memory: ignored');

// ---- other exports ----
const status: string | undefined = sluice.STATUS_CODES[404];
const methods: readonly string[] = sluice.METHODS;
const ver: string = sluice.versions.sluice + sluice.versions.llhttp + sluice.versions.node;
const counters: Record<string, number> = sluice._counters();
const cacheOptions: OpenFileCacheOptions = { max: 100, validMs: 1000, smallFileSize: 0 };
const sCache = new Server({ openFileCache: cacheOptions });
const cached: OpenFileCacheStats = sluice.openFileCacheStats();
const hitCount: number = cached.hits + cached.contentHits;
void [sCache, hitCount];
const compression: CompressionOptions = { encodings: ['gzip'] };
void [status, methods, ver, counters, compression];

// 'upgrade' / 'connect': the request, a TunnelSocket (a Duplex), the head.
{
  const s = sluice.createServer();
  s.on('upgrade', (req, socket, head) => {
    const u: string | undefined = req.url;
    const n: number = head.length;
    socket.setTimeout(1000, () => socket.destroy());
    socket.write(`HTTP/1.1 101 Switching Protocols\r\n\r\n${u}${n}`);
    const ra: string | undefined = socket.remoteAddress;
    void ra;
  });
  s.once('connect', (_req, socket) => { socket.end(); });
}

// TLS: createSecureServer with node's options and every sluice option.
{
  const s = sluice.createSecureServer({
    key: 'PEM', cert: Buffer.from('PEM'), ca: ['PEM'], minVersion: 'TLSv1.2',
    allowHTTP1: true, ALPNProtocols: ['h2', 'http/1.1'], handshakeTimeout: 10000,
    requestBufferAllocator: pool.alloc, compression: true,
    secureOptions: 0, dhparam: 'auto', crl: ['PEM'], sessionIdContext: 'app',
    SNICallback: (name, cb) => cb(null, sluice.createSecureContext({ key: 'PEM', cert: 'PEM' })),
  }, (req, res) => {
    res.end(req.httpVersion);
  });
  const keys: Buffer = s.getTicketKeys();
  s.setTicketKeys(keys);
  s.on('secureConnection', (socket) => {
    const alpn: string | false | undefined = socket.alpnProtocol;
    const proto: string | null = socket.getProtocol();
    void [alpn, proto, socket.getCipher(), socket.getPeerCertificate()];
    const ekm: Buffer = socket.exportKeyingMaterial(32, 'EXPORTER-x');
    const reused: boolean = socket.isSessionReused();
    void [ekm, reused, socket.getSession(), socket.getX509Certificate(), socket.getSharedSigalgs()];
  });
  s.on('tlsClientError', (err) => { const c: string = err.code; void c; });
  s.setSecureContext({ key: 'PEM', cert: 'PEM' });
  s.addContext('*.example.com', sluice.createSecureContext({ key: 'PEM', cert: 'PEM' }));
  s.setSecureContext(tls.createSecureContext({ key: 'PEM', cert: 'PEM' }));
  const v: string = sluice.versions.openssl;
  void v;
}

// serveStatic (docs/files.md)
{
  const s = sluice.createServer({ openFileCache: true }, (req, res) => res.end());
  const same: sluice.Server = s.serveStatic('/static', '/srv/www', {
    index: true, dotfiles: 'deny', followSymlinks: false, maxAge: 86400000,
    immutable: true, etag: true, lastModified: true, cacheControl: true,
    acceptRanges: true, precompressed: true,
  });
  void same;
  const mw: sluice.StaticMiddleware = sluice.serveStatic('/srv/www', {
    maxAge: 3600000, immutable: true, fallthrough: false, redirect: true, dotfiles: 'ignore',
  });
  const mw2: sluice.StaticMiddleware = sluice.serveStatic('/srv/www', {
    index: ['index.html', 'index.htm'], extensions: ['html'], maxAge: '1d',
    setHeaders: (res, path, stat) => {
      if (path.endsWith('.html') && stat.isFile()) res.setHeader('Cache-Control', 'no-cache');
    },
  });
  void mw2;
  s.serveStatic('/a', '/srv/a', { index: 'default.htm', extensions: false, maxage: '2h' });
  const plain = http.createServer((req, res) => mw(req, res, (err?: unknown) => {
    res.statusCode = err ? 500 : 404;
    res.end();
  }));
  void plain;
  const koaMw = sluice.koaServeStatic('/srv/www');
  void koaMw;
}

// ---- WebSockets ----
{
  const wsHttp: Server = createServer();
  const wss = new sluice.WebSocketServer({
    server: wsHttp, path: '/ws', maxPayload: 1 << 20, idleTimeout: 60000, maxBackpressure: 1 << 24,
    maxPendingAutoPongs: 60, maxFragments: 16384,
    handleProtocols: (protocols) => (protocols.has('chat') ? 'chat' : false),
  });
  wss.on('connection', (ws: sluice.WebSocket, req: IncomingRequest) => {
    const u: string = req.url;
    ws.on('message', (data, isBinary: boolean) => {
      const r: sluice.WebSocketSendResult = ws.send(data, { binary: isBinary }, (err?: Error) => { void err; });
      void r;
    });
    ws.subscribe('room');
    const n: number = ws.publish('room', `hi from ${u}`);
    const topics: string[] = ws.topics;
    void n; void topics;
    ws.on('close', (code: number, reason: Buffer) => { void code; void reason; });
    ws.onmessage = (ev) => { void ev.data; };
    if (ws.readyState === sluice.WebSocket.OPEN) ws.close(1000, 'done');
  });
  const delivered: number = wss.publish('room', Buffer.from('all'));
  const subs: number = wss.subscribers('room');
  void delivered; void subs;
  const stats = wss.pubsubStats();
  if (stats !== null) { const dropped: number = stats.dropped; void dropped; }
  const shards = new sluice.WebSocketServer({ server: wsHttp, path: '/shard', pubsub: false });
  const redisBus: sluice.PubSubAdapter = new sluice.pubsub.RedisAdapter({ pubClient: {}, subClient: {}, prefix: 'app#' });
  const machine = new sluice.pubsub.MachineAdapter({ maxBuffered: 1 << 20 });
  const overRedis = new sluice.WebSocketServer({ server: wsHttp, path: '/r', pubsub: redisBus });
  void shards; void machine.peers(); void overRedis;
  const noServer = new sluice.WebSocketServer({ noServer: true });
  wsHttp.on('upgrade', (req, socket, head) => {
    noServer.handleUpgrade(req, socket, head, (ws) => noServer.emit('connection', ws, req));
  });
}

// The HTTP/2 session surface (docs/http2.md "The session").
{
  const h2server = sluice.createServer();
  h2server.on('session', (session) => {
    session.ping(Buffer.alloc(8), (err, ms, payload) => { void err; void ms; void payload.length; });
    session.settings({ maxConcurrentStreams: 10 }, (err, settings) => { void err; void settings.maxConcurrentStreams; });
    session.setLocalWindowSize(1 << 20);
    session.altsvc('h2=":8443"', 'https://example.org');
    session.origin('https://example.org');
    const st: number | undefined = session.state.localWindowSize;
    void st;
    session.goaway(0, 0, Buffer.from('bye'));
  });
}
