// Type declarations for sluice (lib/index.js), written by hand from the API
// in docs/api.md, docs/http2.md, docs/files.md and docs/compression.md.
// Checked by `npm run test:types` (test/types/): one file that uses every
// API and must compile, one whose every `@ts-expect-error` line must fail.
//
// IncomingRequest and ServerResponse are declared as subclasses of
// node:http's IncomingMessage / ServerResponse so that code typed against
// node:http (Express, Koa, middleware) accepts them; at run time they are
// sluice's own classes with the members the docs list. Their `socket` is a
// SluiceSocket (addresses, write/end/destroy, timeouts), typed as node's
// net.Socket for the same reason; `SluiceSocket` below says what it has.

/// <reference types="node" />

import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { Duplex } from 'node:stream';
import type { FileHandle } from 'node:fs/promises';
import type { StatsBase } from 'node:fs';

// ---- createServer options ---------------------------------------------------

/** Memory request-body reads land in: a Buffer to read into, or anything
 * else to have that read copied (a pool's own `alloc` returning `undefined`
 * means "dry": the connection stops reading until a buffer comes back). */
export type RequestBufferAllocator = (size: number) => Buffer | undefined | null | void;

export type Encoding = 'br' | 'gzip' | 'deflate';

/** What `compression.filter` sees of the request: the HTTP/1.1 and compat
 * `req`, or for the HTTP/2 `'stream'` API a view with the request headers
 * (pseudo-headers included). */
export interface CompressionFilterRequest {
  method?: string | undefined;
  url?: string | undefined;
  headers: http.IncomingHttpHeaders;
}

/** What `compression.filter` sees of the response: `res`, or for the
 * HTTP/2 `'stream'` API a `{ statusCode, getHeader }` view. */
export interface CompressionFilterResponse {
  statusCode: number;
  getHeader(name: string): number | string | string[] | undefined;
}

/** The `compression` option (docs/compression.md). */
export interface CompressionOptions {
  /** Server preference; the first wins ties. Default `['br', 'gzip', 'deflate']`. */
  encodings?: Encoding[];
  /** Bodies smaller than this many bytes are sent as they are. Default 1024. */
  threshold?: number;
  /** zlib level for gzip / deflate, -1 (= 6) to 9. Default -1. */
  level?: number;
  /** Brotli quality, 0 to 11. Default 4. */
  brotliQuality?: number;
  /** `false`: do not compress this response. Default: the Content-Type is compressible. */
  filter?: ((req: CompressionFilterRequest, res: CompressionFilterResponse) => boolean) | null;
  /** Streamed br responses open at once; above it a streamed response negotiates without br. Default 128. */
  maxBrotliStreams?: number;
}

/** The open-file cache (docs/files.md, "The open-file cache"). */
export interface OpenFileCacheOptions {
  /** Entries (one open descriptor each), least recently used first out. Default 1000. */
  max?: number;
  /** ms an entry is used after its open (changes are also seen at once through uv_fs_event). Default 60000. */
  validMs?: number;
  /** Regular files up to this many bytes are kept in memory too; 0: none. Default 65536. */
  smallFileSize?: number;
  /** Bytes of small files kept in memory in all. Default 64 MiB. */
  smallFileBytes?: number;
}

/** sluice.openFileCacheStats(): this thread's open-file cache. */
export interface OpenFileCacheStats {
  enabled: boolean;
  hits: number;
  misses: number;
  /** Hits on an entry holding the file's bytes. */
  contentHits: number;
  /** Entries dropped on a change event. */
  invalidations: number;
  /** Entries dropped at the end of validMs. */
  expirations: number;
  /** Entries or content pushed out by a bound. */
  evictions: number;
  /** Opens begun for the cache (misses that opened the path). */
  opens: number;
  /** Misses that waited for another request's open of the same path instead of opening it. */
  coalesced: number;
  entries: number;
  contentBytes: number;
  /** Descriptors held by entries (open or closing). */
  fds: number;
}

/** HTTP/2 settings (docs/http2.md). */
export interface Http2Options {
  /** SETTINGS_MAX_CONCURRENT_STREAMS. Default 100. */
  maxConcurrentStreams?: number;
  /** Stream window for request bodies. Default 1 MiB. */
  initialWindowSize?: number;
  /** Connection window. Default 16 MiB. */
  connectionWindowSize?: number;
}

export interface ServerOptions {
  /** Bytes of request line and header fields; over it: 431. Default 16384. */
  maxHeaderSize?: number;
  /** ms until a request's headers are complete; then 408. Default 60000. */
  headersTimeout?: number;
  /** ms until a request is fully received; then 408. Default 300000. */
  requestTimeout?: number;
  /** ms a connection may stay idle between requests. Default 5000. */
  keepAliveTimeout?: number;
  /** ms an idle connection is kept past the advertised keepAliveTimeout (node's). Default 1000. */
  keepAliveTimeoutBuffer?: number;
  /** Bytes queued for a connection (an HTTP/2 stream) before `write()` returns false. Default 65536. */
  highWaterMark?: number;
  /** Memory request-body reads land in, e.g. `createBufferPool().alloc`. */
  requestBufferAllocator?: RequestBufferAllocator | null;
  /** Header lines kept per request; `null`: 2000; 0: no limit. */
  maxHeadersCount?: number | null;
  /** Request body bytes; over it: 413 and close. Default `Infinity`. */
  maxRequestBodySize?: number | null;
  /** Requests per connection; 0: no limit. */
  maxRequestsPerSocket?: number | null;
  /** Open connections; one more is closed at accept and `'drop'` is emitted. */
  maxConnections?: number | null;
  /** Bytes waiting for a client that does not read before a further write destroys the connection; 0: no limit. Default 16 MiB. */
  maxOutputBuffer?: number | null;
  /** An HTTP/1.1 request without Host gets 400. Default `true`. */
  requireHostHeader?: boolean;
  /** As node: repeated request fields whose duplicates are otherwise dropped (Authorization, ...) are joined with ', '. */
  joinDuplicateHeaders?: boolean;
  /** As node: lenient HTTP/1.1 parsing for legacy clients (docs/compat.md); unset takes --insecure-http-parser. */
  insecureHTTPParser?: boolean;
  /** Response compression: `true` for the defaults, or options. Default off. */
  compression?: boolean | CompressionOptions | null;
  /** This thread's open-file cache. Not given (default): static mounts (`serveStatic`, the middleware) use it with the defaults; `true` or options: every file response (respondWithFile too); `false` / `null`: none. */
  openFileCache?: boolean | OpenFileCacheOptions | null;
  /** HTTP/2 settings. */
  http2?: Http2Options;
  /** node:http2's spelling of `http2.maxConcurrentStreams` / `http2.initialWindowSize`; `enableConnectProtocol` advertises RFC 8441 extended CONNECT (an attached WebSocketServer does too); `maxHeaderListSize` (or `maxHeaderSize`) is advertised and a longer header list reset ENHANCE_YOUR_CALM, as node. */
  settings?: Pick<http2.Settings, 'maxConcurrentStreams' | 'initialWindowSize' | 'enableConnectProtocol' | 'maxHeaderListSize'> & { maxHeaderSize?: number };
  /** node:http2: header fields per HTTP/2 request (pseudo-headers included, at least 4); one more resets the stream ENHANCE_YOUR_CALM. Default: no count limit. */
  maxHeaderListPairs?: number;
  /** node:http2: invalid frames an HTTP/2 session takes before it is closed. Default 1000. */
  maxSessionInvalidFrames?: number;
  /** node:http2: entries one SETTINGS frame may carry. Default 32. */
  maxSettings?: number;
  /** node:http2: SETTINGS frames sent and not yet acked before `session.settings()` destroys the session. Default 10. */
  maxOutstandingSettings?: number;
  /** net.Server's option, reported as `server.allowHalfOpen` and each socket's. Default `true` (as node:http). */
  allowHalfOpen?: boolean;
  /** node:http2's: the class of the HTTP/2 (and HTTP/3) compat requests, extending `http2.Http2ServerRequest`. */
  Http2ServerRequest?: typeof http2.Http2ServerRequest;
  /** node:http2's: the class of the HTTP/2 (and HTTP/3) compat responses, extending `http2.Http2ServerResponse`. */
  Http2ServerResponse?: typeof http2.Http2ServerResponse;
}

export interface ListenOptions {
  port?: number;
  host?: string;
  backlog?: number;
  /** SO_REUSEPORT before bind: servers (threads, processes) binding the same address and port share it; the kernel spreads connections. Default: `true` in a cluster worker on a fixed port, else `false` (docs/deployment.md). */
  reusePort?: boolean;
  /** In a cluster worker: do not use reusePort by default (as node's `exclusive`). */
  exclusive?: boolean;
  /** A Unix domain socket to listen on (without `port`); `address()` is then this path. */
  path?: string;
  /** With `path`: the socket file readable by all users. */
  readableAll?: boolean;
  /** With `path`: the socket file writable by all users. */
  writableAll?: boolean;
}

// ---- sockets ----------------------------------------------------------------

/** What `req.socket`, `res.socket`, `'clientError'`'s socket and an HTTP/2
 * session's `socket` are at run time (typed as net.Socket on req/res for
 * compatibility with code typed against node:http). */
/**
 * The socket of the 'upgrade' and 'connect' events: after an accepted
 * Upgrade or CONNECT the connection is a byte stream both ways (a
 * stream.Duplex, not a net.Socket; docs/api.md "Upgrade and CONNECT").
 */
export interface TunnelSocket extends Duplex {
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly remoteFamily: 'IPv4' | 'IPv6' | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly readyState: 'open' | 'readOnly' | 'writeOnly' | 'closed';
  address(): net.AddressInfo | {};
  setTimeout(ms: number, callback?: () => void): this;
}

export interface SluiceSocket extends EventEmitter {
  /** The server that accepted the connection. */
  readonly server: Server | null;
  /** Bytes read from / written to the connection (HTTP/1.1; undefined on an HTTP/2 session's view). */
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly remoteAddress: string | undefined;
  readonly remotePort: number | undefined;
  readonly remoteFamily: 'IPv4' | 'IPv6' | undefined;
  readonly localAddress: string | undefined;
  readonly localPort: number | undefined;
  readonly writable: boolean;
  readonly readable: boolean;
  readonly destroyed: boolean;
  /** true on a secure server's connections (createSecureServer). */
  readonly encrypted: boolean;
  // TLS facts (docs/tls.md); undefined / null on cleartext.
  readonly alpnProtocol: string | false | undefined;
  readonly servername: string | false | undefined;
  readonly authorized: boolean;
  readonly authorizationError: string | null;
  getProtocol(): string | null;
  getCipher(): tls.CipherNameAndProtocol | undefined;
  getPeerCertificate(): tls.PeerCertificate | {} | null;
  /** The certificate served (TLS), as getPeerCertificate. */
  getCertificate(): tls.PeerCertificate | {} | null;
  getX509Certificate(): import('crypto').X509Certificate | undefined;
  getPeerX509Certificate(): import('crypto').X509Certificate | undefined;
  /** The session in DER (a node client's `session` option). */
  getSession(): Buffer | undefined;
  getTLSTicket(): Buffer | undefined;
  isSessionReused(): boolean;
  getSharedSigalgs(): string[];
  /** null on a server socket, as node. */
  getEphemeralKeyInfo(): null;
  exportKeyingMaterial(length: number, label: string, context?: Buffer): Buffer;
  timeout: number;
  address(): net.AddressInfo | {};
  write(data: string | Uint8Array, cb?: (err?: Error | null) => void): boolean;
  write(data: string | Uint8Array, encoding?: BufferEncoding, cb?: (err?: Error | null) => void): boolean;
  end(cb?: () => void): this;
  end(data: string | Uint8Array, cb?: () => void): this;
  end(data: string | Uint8Array, encoding?: BufferEncoding, cb?: () => void): this;
  destroy(err?: Error): this;
  destroySoon(): this;
  setTimeout(ms: number, cb?: () => void): this;
  setNoDelay(noDelay?: boolean): this;
  setKeepAlive(enable?: boolean, initialDelay?: number): this;
  ref(): this;
  unref(): this;
  pause(): this;
  resume(): this;
}

// ---- files ------------------------------------------------------------------

/** The fs.Stats-shaped stat `statCheck` receives. */
export type FileStat = StatsBase<number>;

/** Options of server.serveStatic (docs/files.md, "serveStatic"). */
export interface ServeStaticOptions {
  /** `dir/` serves the first of these names under dir that is a file, as send's `index` (default 'index.html'; true: the default; false: none). */
  index?: boolean | string | string[];
  /** A path with no extension that does not exist: `path.<ext>` for each of these in order, as send's `extensions` (default none). */
  extensions?: string | string[] | false;
  /** Paths with a segment starting with '.': 'ignore' falls through to JS (default), 'deny' answers 403, 'allow' serves. */
  dotfiles?: 'ignore' | 'deny' | 'allow';
  /** Follow symbolic links out of the root (default false: such links answer 403). */
  followSymlinks?: boolean;
  /** `Cache-Control: public, max-age=` this many milliseconds / 1000, or a duration string as send reads it ('1d', '2h') (default 0, capped at a year). */
  maxAge?: number | string;
  /** serve-static's spelling of maxAge. */
  maxage?: number | string;
  /** Adds `immutable` to Cache-Control (default false). */
  immutable?: boolean;
  /** Send Cache-Control (default true). */
  cacheControl?: boolean;
  /** Send ETag (default true). */
  etag?: boolean;
  /** Send Last-Modified (default true). */
  lastModified?: boolean;
  /** Answer single byte ranges (default true). */
  acceptRanges?: boolean;
  /** Serve path.br / path.gz when accepted and not older than path (default false). */
  precompressed?: boolean;
}

/** Options of the sluice.serveStatic middleware (docs/files.md, "The serveStatic middleware"). */
export interface ServeStaticMiddlewareOptions extends ServeStaticOptions {
  /** A miss, a refusal before a file is found (400 / 403) and other methods call `next()` (default true; a 412 / 416 still goes to `next(err)`, as serve-static's); false: `next(err)` with err.status, and 405 for other methods, as serve-static. */
  fallthrough?: boolean;
  /** A directory asked for without its trailing slash answers 301 to the path with it (default true). */
  redirect?: boolean;
  /** Called once a file is found, before the answer's fields go on res (what it sets wins), as serve-static's. */
  setHeaders?: (res: http.ServerResponse, path: string, stat: FileStat) => void;
}

/** The error `next` gets when the middleware cannot serve (err.status / err.statusCode as http-errors'; `code` for sluice's own). */
export type StaticNextFunction = (err?: unknown) => void;

/** A Connect / Express middleware. */
export type StaticMiddleware = (req: http.IncomingMessage, res: http.ServerResponse, next: StaticNextFunction) => void;

/** Options of respondWithFile / respondWithFD (docs/files.md), as node:http2's. */
export interface FileResponseOptions {
  /** First byte to send. */
  offset?: number;
  /** Bytes to send (clamped to the file's end). */
  length?: number;
  /** May add headers (on `headers`); returning `false` cancels the response (the handler answers itself). */
  statCheck?: (stat: FileStat, headers: http2.OutgoingHttpHeaders, statOptions: { offset: number; length?: number | undefined }) => void | boolean;
  /** Called instead of the default error answer (404 / 500, or RST_STREAM over HTTP/2). */
  onError?: (err: NodeJS.ErrnoException) => void;
  /** `false`: do not compress this file (with the server's `compression` option). */
  compress?: boolean;
}

export interface FilePathResponseOptions extends FileResponseOptions {
  /** Serve `path.br` / `path.gz` when acceptable, present and not older than `path`. */
  precompressed?: boolean;
}

/** An open file descriptor or a FileHandle; sluice never closes it. */
export type FileTarget = number | FileHandle;

// ---- HTTP/1.1 (and HTTP/2 compat) request and response --------------------

/** `req`: a Readable over the request body (docs/api.md). */
export declare class IncomingRequest extends http.IncomingMessage {
  private constructor();
  /** The method, always set for a request sluice emits. */
  method: string;
  /** The request target, always set for a request sluice emits. */
  url: string;
}

/** `res` (docs/api.md, docs/files.md, docs/compression.md). */
export declare class ServerResponse extends http.ServerResponse<IncomingRequest> {
  private constructor();
  /** `false` opts this response out of the server's `compression`. */
  compress?: boolean;
  /** Pushes what was written so far through the compressor (server-sent events). */
  flush(): void;
  /** Sends a file natively (no JS per chunk); `headers` join those set on res, `':status'` sets the status. */
  respondWithFile(path: string | URL, headers?: http2.OutgoingHttpHeaders | null, options?: FilePathResponseOptions): void;
  /** Sends an open file (never closed by sluice). */
  respondWithFD(fd: FileTarget, headers?: http2.OutgoingHttpHeaders | null, options?: FileResponseOptions): void;
}

// ---- HTTP/2 stream API ------------------------------------------------------

export interface Http2RespondOptions {
  /** End the stream with the headers (no body). */
  endStream?: boolean;
  /** Emit `'wantTrailers'` after the last DATA frame; answer with `sendTrailers()`. */
  waitForTrailers?: boolean;
  /** `false`: no `date` header. */
  sendDate?: boolean;
  /** `false` opts this response out of the server's `compression`. */
  compress?: boolean;
}

export interface Http2StreamFileOptions extends FilePathResponseOptions {
  waitForTrailers?: boolean;
}

export interface Http2StreamFdOptions extends FileResponseOptions {
  waitForTrailers?: boolean;
}

export interface Http2StreamState {
  state: number;
  localClose: number;
  remoteClose: number;
  weight: number;
  sumDependencyWeight: number;
}

/** `stream.session`: the parts of an Http2Session a handler touches. */
export interface Http2SessionHandle extends EventEmitter {
  readonly socket: SluiceSocket;
  readonly closed: boolean;
  readonly destroyed: boolean;
  readonly encrypted: boolean;
  readonly alpnProtocol: string;
  /** GOAWAY(NO_ERROR); open streams finish, then the session closes. */
  close(callback?: () => void): void;
  goaway(code?: number, lastStreamID?: number, opaqueData?: ArrayBufferView): void;
  destroy(): void;
  setTimeout(ms?: number, callback?: () => void): this;
  readonly type: number;
  readonly pendingSettingsAck: boolean;
  readonly localSettings: import('http2').Settings;
  readonly remoteSettings: import('http2').Settings;
  readonly state: import('http2').SessionState;
  ping(callback: (err: Error | null, duration: number, payload: Buffer) => void): boolean;
  ping(payload: ArrayBufferView, callback: (err: Error | null, duration: number, payload: Buffer) => void): boolean;
  settings(settings: import('http2').Settings,
    callback?: (err: Error | null, settings: import('http2').Settings, duration: number) => void): void;
  setLocalWindowSize(windowSize: number): void;
  altsvc(alt: string, originOrStream: number | string | URL | { origin: string }): void;
  origin(...origins: Array<string | URL | { origin: string }>): void;
  ref(): void;
  unref(): void;

  addListener(event: 'goaway', listener: (errorCode: number, lastStreamID: number) => void): this;
  addListener(event: 'close', listener: () => void): this;
  addListener(event: string | symbol, listener: (...args: any[]) => void): this;
  on(event: 'goaway', listener: (errorCode: number, lastStreamID: number) => void): this;
  on(event: 'close', listener: () => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  once(event: 'goaway', listener: (errorCode: number, lastStreamID: number) => void): this;
  once(event: 'close', listener: () => void): this;
  once(event: string | symbol, listener: (...args: any[]) => void): this;
}

/** The `'stream'` event's stream: a Duplex whose readable side is the request body (docs/http2.md). */
export interface ServerHttp2Stream extends Duplex {
  readonly id: number;
  readonly pending: boolean;
  readonly closed: boolean;
  readonly aborted: boolean;
  readonly session: Http2SessionHandle;
  readonly bufferSize: number;
  readonly headersSent: boolean;
  readonly sentHeaders: http2.OutgoingHttpHeaders | undefined;
  readonly sentInfoHeaders: http2.OutgoingHttpHeaders[];
  readonly sentTrailers: http2.OutgoingHttpHeaders | undefined;
  readonly rstCode: number | undefined;
  readonly endAfterHeaders: boolean;
  readonly state: Http2StreamState;
  timeout: number;

  respond(headers?: http2.OutgoingHttpHeaders, options?: Http2RespondOptions): void;
  respondWithFile(path: string | URL, headers?: http2.OutgoingHttpHeaders | null, options?: Http2StreamFileOptions): void;
  respondWithFD(fd: FileTarget, headers?: http2.OutgoingHttpHeaders | null, options?: Http2StreamFdOptions): void;
  /** A 1xx informational response before `respond()`. */
  additionalHeaders(headers: http2.OutgoingHttpHeaders): void;
  /** After `'wantTrailers'`. */
  sendTrailers(headers: http2.OutgoingHttpHeaders): void;
  /** RST_STREAM with `code` (default NO_ERROR). */
  close(code?: number, callback?: () => void): void;
  /** Sync flush of the compressor (a no-op for an uncompressed stream). */
  flush(): void;
  priority(options?: unknown): void;
  setTimeout(ms: number, callback?: () => void): this;

  addListener(event: 'aborted' | 'close' | 'drain' | 'end' | 'finish' | 'pause' | 'readable' | 'resume' | 'wantTrailers', listener: () => void): this;
  addListener(event: 'data', listener: (chunk: Buffer | string) => void): this;
  addListener(event: 'error', listener: (err: Error) => void): this;
  addListener(event: 'trailers', listener: (trailers: http2.IncomingHttpHeaders, flags: number) => void): this;
  addListener(event: string | symbol, listener: (...args: any[]) => void): this;
  on(event: 'aborted' | 'close' | 'drain' | 'end' | 'finish' | 'pause' | 'readable' | 'resume' | 'wantTrailers', listener: () => void): this;
  on(event: 'data', listener: (chunk: Buffer | string) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'trailers', listener: (trailers: http2.IncomingHttpHeaders, flags: number) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  once(event: 'aborted' | 'close' | 'drain' | 'end' | 'finish' | 'pause' | 'readable' | 'resume' | 'wantTrailers', listener: () => void): this;
  once(event: 'data', listener: (chunk: Buffer | string) => void): this;
  once(event: 'error', listener: (err: Error) => void): this;
  once(event: 'trailers', listener: (trailers: http2.IncomingHttpHeaders, flags: number) => void): this;
  once(event: string | symbol, listener: (...args: any[]) => void): this;
  prependListener(event: 'aborted' | 'close' | 'drain' | 'end' | 'finish' | 'pause' | 'readable' | 'resume' | 'wantTrailers', listener: () => void): this;
  prependListener(event: 'data', listener: (chunk: Buffer | string) => void): this;
  prependListener(event: 'error', listener: (err: Error) => void): this;
  prependListener(event: 'trailers', listener: (trailers: http2.IncomingHttpHeaders, flags: number) => void): this;
  prependListener(event: string | symbol, listener: (...args: any[]) => void): this;
}

// ---- Server -----------------------------------------------------------------

export type RequestListener = (req: IncomingRequest, res: ServerResponse) => void;

/** What `'drop'` receives for a connection closed at accept (`maxConnections`). */
export interface DropArgument {
  localAddress: string;
  localPort: number;
  localFamily: 'IPv4' | 'IPv6';
  remoteAddress: string;
  remotePort: number;
  remoteFamily: 'IPv4' | 'IPv6';
}

/** A `'clientError'` error: llhttp's code (e.g. `HPE_INVALID_METHOD`) or `ERR_HTTP_REQUEST_TIMEOUT`, and the status sluice would answer. */
export interface ClientError extends Error {
  code: string;
  statusCode?: number;
  /** llhttp's reason (parse errors). */
  reason?: string;
  /** A parse error: the read being parsed when it was found (as node's). */
  rawPacket?: Buffer;
  /** A parse error: how far into `rawPacket` the parser got. */
  bytesParsed?: number;
}

export declare class Server extends EventEmitter {
  constructor(requestListener?: RequestListener);
  constructor(options?: ServerOptions | null, requestListener?: RequestListener);

  readonly listening: boolean;
  maxHeaderSize: number;
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  keepAliveTimeoutBuffer: number;
  timeout: number;
  requireHostHeader: boolean;
  joinDuplicateHeaders: boolean | undefined;
  /** The insecureHTTPParser option as given. */
  insecureHTTPParser: boolean | undefined;
  /** As node: false aborts the requests in flight at a client's FIN; true lets their responses finish. */
  httpAllowHalfOpen: boolean;
  /** net.Server's allowHalfOpen (the option; default `true`, as node:http). */
  allowHalfOpen: boolean;
  requestBufferAllocator: RequestBufferAllocator | null;
  maxHeadersCount: number | null;
  maxRequestsPerSocket: number | null;
  maxConnections: number | null | undefined;
  maxRequestBodySize: number | null;
  maxOutputBuffer: number | null;
  /** Open connections (HTTP/1.1 and HTTP/2). */
  readonly _connections: number;

  listen(port?: number, hostname?: string, backlog?: number, listeningListener?: () => void): this;
  listen(port?: number, hostname?: string, listeningListener?: () => void): this;
  listen(port?: number, backlog?: number, listeningListener?: () => void): this;
  listen(port?: number, listeningListener?: () => void): this;
  listen(options: ListenOptions, listeningListener?: () => void): this;
  /** A Unix domain socket (a string that is not a number). */
  listen(path: string, backlog?: number, listeningListener?: () => void): this;
  listen(path: string, listeningListener?: () => void): this;
  /**
   * Files under `root` answered natively (no JS per request) for complete,
   * bodiless GET / HEAD requests whose path lies under `urlPrefix`;
   * misses reach 'request' / 'stream' unchanged (docs/files.md, "serveStatic").
   */
  serveStatic(urlPrefix: string, root: string, options?: ServeStaticOptions): this;
  /** The bound address; a Unix socket's path when listening on one. */
  address(): net.AddressInfo | string | null;
  /** Stops accepting, closes idle connections, lets in-flight requests finish (`Connection: close`, HTTP/2 GOAWAY); `'close'` once the last connection is gone. */
  close(callback?: (err?: Error) => void): this;
  closeAllConnections(): void;
  closeIdleConnections(): void;
  getConnections(callback: (err: Error | null, count: number) => void): this;
  /** The request counters and durations kept natively (docs/observability.md). */
  metrics(): ServerMetrics;
  /** metrics() in Prometheus's text exposition format (0.0.4). */
  metricsText(): string;
  setTimeout(ms?: number, callback?: () => void): this;
  /** Whether the listening socket keeps the process alive (open connections always do). */
  ref(): this;
  unref(): this;
  [Symbol.asyncDispose](): Promise<void>;

  addListener(event: 'request' | 'checkContinue' | 'checkExpectation', listener: RequestListener): this;
  addListener(event: 'listening' | 'close' | 'timeout', listener: () => void): this;
  addListener(event: 'error', listener: (err: NodeJS.ErrnoException) => void): this;
  addListener(event: 'clientError', listener: (err: ClientError, socket: SluiceSocket) => void): this;
  addListener(event: 'connection', listener: (socket: SluiceSocket) => void): this;
  addListener(event: 'drop', listener: (data: DropArgument) => void): this;
  addListener(event: 'dropRequest', listener: (req: IncomingRequest, socket: SluiceSocket) => void): this;
  addListener(event: 'session', listener: (session: Http2SessionHandle) => void): this;
  addListener(event: 'stream', listener: (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void): this;
  addListener(event: 'upgrade' | 'connect', listener: (req: IncomingRequest, socket: TunnelSocket, head: Buffer) => void): this;
  addListener(event: string | symbol, listener: (...args: any[]) => void): this;

  on(event: 'request' | 'checkContinue' | 'checkExpectation', listener: RequestListener): this;
  on(event: 'listening' | 'close' | 'timeout', listener: () => void): this;
  on(event: 'error', listener: (err: NodeJS.ErrnoException) => void): this;
  on(event: 'clientError', listener: (err: ClientError, socket: SluiceSocket) => void): this;
  on(event: 'connection', listener: (socket: SluiceSocket) => void): this;
  on(event: 'drop', listener: (data: DropArgument) => void): this;
  on(event: 'dropRequest', listener: (req: IncomingRequest, socket: SluiceSocket) => void): this;
  on(event: 'session', listener: (session: Http2SessionHandle) => void): this;
  on(event: 'stream', listener: (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void): this;
  on(event: 'upgrade' | 'connect', listener: (req: IncomingRequest, socket: TunnelSocket, head: Buffer) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;

  once(event: 'request' | 'checkContinue' | 'checkExpectation', listener: RequestListener): this;
  once(event: 'listening' | 'close' | 'timeout', listener: () => void): this;
  once(event: 'error', listener: (err: NodeJS.ErrnoException) => void): this;
  once(event: 'clientError', listener: (err: ClientError, socket: SluiceSocket) => void): this;
  once(event: 'connection', listener: (socket: SluiceSocket) => void): this;
  once(event: 'drop', listener: (data: DropArgument) => void): this;
  once(event: 'dropRequest', listener: (req: IncomingRequest, socket: SluiceSocket) => void): this;
  once(event: 'session', listener: (session: Http2SessionHandle) => void): this;
  once(event: 'stream', listener: (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void): this;
  once(event: 'upgrade' | 'connect', listener: (req: IncomingRequest, socket: TunnelSocket, head: Buffer) => void): this;
  once(event: string | symbol, listener: (...args: any[]) => void): this;

  prependListener(event: 'request' | 'checkContinue' | 'checkExpectation', listener: RequestListener): this;
  prependListener(event: 'listening' | 'close' | 'timeout', listener: () => void): this;
  prependListener(event: 'error', listener: (err: NodeJS.ErrnoException) => void): this;
  prependListener(event: 'clientError', listener: (err: ClientError, socket: SluiceSocket) => void): this;
  prependListener(event: 'connection', listener: (socket: SluiceSocket) => void): this;
  prependListener(event: 'drop', listener: (data: DropArgument) => void): this;
  prependListener(event: 'dropRequest', listener: (req: IncomingRequest, socket: SluiceSocket) => void): this;
  prependListener(event: 'session', listener: (session: Http2SessionHandle) => void): this;
  prependListener(event: 'stream', listener: (stream: ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => void): this;
  prependListener(event: 'upgrade' | 'connect', listener: (req: IncomingRequest, socket: TunnelSocket, head: Buffer) => void): this;
  prependListener(event: string | symbol, listener: (...args: any[]) => void): this;

  emit(event: 'request' | 'checkContinue' | 'checkExpectation', req: IncomingRequest, res: ServerResponse): boolean;
  emit(event: 'listening' | 'close' | 'timeout'): boolean;
  emit(event: 'error', err: Error): boolean;
  emit(event: string | symbol, ...args: any[]): boolean;
}

export declare function createServer(requestListener?: RequestListener): Server;
export declare function createServer(options?: ServerOptions | null, requestListener?: RequestListener): Server;

// ---- TLS (docs/tls.md) -----------------------------------------------------

type TlsContextOption = string | Buffer | Array<string | Buffer>;

/** node's TLS options sluice takes (engines, pskCallback, enableTrace:
 * ERR_SLUICE_TLS_UNSUPPORTED). */
export interface SecureContextOptions {
  key?: string | Buffer | Array<string | Buffer | { pem: string | Buffer; passphrase?: string }>;
  cert?: TlsContextOption;
  ca?: TlsContextOption;
  pfx?: string | Buffer | { buf: string | Buffer; passphrase?: string };
  passphrase?: string;
  ciphers?: string;
  ecdhCurve?: string;
  sigalgs?: string;
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  honorCipherOrder?: boolean;
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
  /** Seconds. Default 300. */
  sessionTimeout?: number;
  /** 48 bytes, node's layout and ticket format. */
  ticketKeys?: Buffer;
  /** Up to 32 bytes; sessions resume only where it matches. Default 'sluice'. */
  sessionIdContext?: string;
  /** SSL_OP_* bits (crypto.constants). */
  secureOptions?: number;
  /** An OpenSSL server method name ('TLSv1_2_method'...): fixes the versions as node does. */
  secureProtocol?: string;
  /** 'auto' or PEM DH parameters: enables DHE suites. */
  dhparam?: string | Buffer;
  /** PEM CRL(s): client certificates are checked for revocation. */
  crl?: TlsContextOption;
  /** The protocols offered, in the server's order: 'h2' and/or 'http/1.1'. */
  ALPNProtocols?: Array<'h2' | 'http/1.1'> | Uint8Array;
}

export interface SecureServerOptions extends ServerOptions, SecureContextOptions {
  /** Serve 'http/1.1' (and clients without ALPN) besides 'h2'. Default true. */
  allowHTTP1?: boolean;
  /** ms a handshake may take; then 'tlsClientError' ERR_TLS_HANDSHAKE_TIMEOUT. Default 120000. */
  handshakeTimeout?: number;
  /** As node's: the handshake waits until `cb` answers (now or later) with
   * a context of node's tls.createSecureContext() (or its `.context`, or
   * TLS options), nothing (the default certificate) or an error
   * ('tlsClientError'). Replaces addContext's names. */
  SNICallback?: (servername: string, cb: (err: Error | null, ctx?: tls.SecureContext | SecureContextOptions | null) => void) => void;
  /** HTTP/3 on a UDP socket beside TCP (docs/http3.md); needs features.http3. */
  http3?: boolean | Http3Options;
}

export interface Http3Options {
  /** UDP port; default the TCP port's number (0: any). */
  port?: number;
  /** UDP bind address; default the TCP one. */
  host?: string;
  /** Alt-Svc on HTTP/1.1 and HTTP/2 responses. Default true. */
  altSvc?: boolean;
  /** Alt-Svc ma (seconds). Default 86400. */
  maxAge?: number;
  /** Default 10000; more are refused. */
  maxConnections?: number;
  /** Concurrent requests per connection; more are reset (H3_REQUEST_REJECTED). Default 100. */
  maxStreams?: number;
  /** ms without request activity before a connection is closed. Default 30000. */
  idleTimeout?: number;
  /** ms close() lets HTTP/3 requests finish after GOAWAY. Default 5000. */
  closeGrace?: number;
  /** false: no Retry round trip for new clients. Default true. */
  addressValidation?: boolean;
  /** Handshakes in progress at once; more are refused (0: no bound). Default 1000. */
  maxHandshakes?: number;
  /** Connections from one IP address; more are refused (0: no bound). Default 0. */
  maxConnectionsPerAddress?: number;
  /** false: no GSO sends (every datagram through OpenSSL's BIO). Default true. */
  gso?: boolean;
}

export declare class SecureServer extends Server {
  constructor(requestListener?: RequestListener);
  constructor(options?: SecureServerOptions | null, requestListener?: RequestListener);
  readonly allowHTTP1: boolean;
  /** The HTTP/3 (UDP) address; null when http3 is off or not listening. */
  http3Address(): { address: string; port: number; family: string } | null;
  /** New connections use the new certificates; open ones keep theirs. A
   * context of node's tls.createSecureContext() gives its credentials
   * (the server's other options stay). */
  setSecureContext(options: SecureContextOptions | tls.SecureContext): void;
  /** The session ticket keys (48 bytes). */
  getTicketKeys(): Buffer;
  /** New ticket keys for every context of this server. */
  setTicketKeys(keys: Buffer): void;
  /** SNI: a ClientHello naming `hostname` ('*' = one label) gets `context`. */
  addContext(hostname: string, context: SecureContextOptions | tls.SecureContext): void;

  on(event: 'secureConnection', listener: (socket: SluiceSocket) => void): this;
  on(event: 'tlsClientError', listener: (err: Error & { code: string }, socket: SluiceSocket) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
  once(event: 'secureConnection', listener: (socket: SluiceSocket) => void): this;
  once(event: 'tlsClientError', listener: (err: Error & { code: string }, socket: SluiceSocket) => void): this;
  once(event: string | symbol, listener: (...args: any[]) => void): this;
}

export declare function createSecureServer(requestListener?: RequestListener): SecureServer;
export declare function createSecureServer(options?: SecureServerOptions | null, requestListener?: RequestListener): SecureServer;
/** node's tls.createSecureContext, its options remembered: SecureServer#addContext, setSecureContext and SNICallback answers then apply all of them. */
export declare function createSecureContext(options?: SecureContextOptions): tls.SecureContext;

// ---- buffer pools -----------------------------------------------------------

export interface BufferPoolOptions {
  /** Bytes per buffer. Default 65536. */
  bufferSize?: number;
  /** Buffers the pool may create; memory is bounded by bufferSize x maxBuffers. Default 1024. */
  maxBuffers?: number;
  /** Fill released memory with 0xDB (finds use after release). Default false. */
  poison?: boolean;
}

export interface BufferPoolStats {
  bufferSize: number;
  maxBuffers: number;
  /** Buffers created so far (never decreases). */
  allocated: number;
  /** Buffers handed out and not yet back. */
  inUse: number;
}

/** A bounded pool of request-body read buffers. `alloc`, `release` and
 * `stats` are bound to the pool: `pool.alloc` can be passed on bare. */
export declare class BufferPool {
  constructor(options?: BufferPoolOptions);
  /** A `bufferSize` Buffer (`size` is only a hint), or `undefined` when all `maxBuffers` are in use. */
  readonly alloc: (size?: number) => Buffer | undefined;
  /** Gives one reference back (same as `releaseBuffer`). */
  readonly release: (chunk: unknown) => void;
  readonly stats: () => BufferPoolStats;
}

export interface ServerMetrics {
  requests: Array<{ protocol: '1.1' | '2' | '3'; method: string; statusClass: string; count: number }>;
  /** Seconds; counts are cumulative per bucket bound (OpenTelemetry's http.server.request.duration buckets). */
  duration: Record<string, { buckets: number[]; counts: number[]; count: number; sum: number }>;
  connections: { open: number; accepted: number; dropped: number };
  bytes: { in: number; out: number };
  /** Open HTTP/2 and HTTP/3 request streams, by protocol ('2', '3'). */
  streams: Record<string, number>;
  /** Requests the server refused itself, by protocol ('1.1', '2', '3') then reason. */
  refused: Record<string, Record<string, number>>;
  websockets: {
    open: number;
    messages: { received: number; sent: number };
    dropped: { sends: number; publishes: number };
  };
  bufferPool: Record<string, number> | null;
  openFileCache: Record<string, number | boolean>;
  accessLog: { written: number; dropped: number } | null;
  http2: { resets: { received: number; sent: number }; goaways: { received: number; sent: number } };
}
/** The Prometheus text exposition of the servers' metrics (series summed). */
export declare function prometheusText(...servers: Server[]): string;
/** A request listener (or middleware) answering prometheusText(...servers). */
export declare function prometheusHandler(...servers: Server[]): (req: http.IncomingMessage, res: http.ServerResponse) => void;
/** Registers the servers' metrics in a prom-client Registry, read at each scrape; returns the registry. */
export declare function promClientCollector<R extends { registerMetric(metric: unknown): void }>(registry: R, ...servers: Server[]): R;

export declare function createBufferPool(options?: BufferPoolOptions): BufferPool;

/** Gives a body chunk (or an `alloc` result) back to the pool that owns its
 * memory; anything no pool owns is ignored. A second release throws
 * `ERR_SLUICE_BUFFER_RELEASED`. */
export declare function releaseBuffer(chunk: unknown): void;

// ---- other exports ----------------------------------------------------------

export declare const STATUS_CODES: { readonly [status: number]: string | undefined };
export declare const METHODS: readonly string[];

export declare const features: Readonly<{
  /** Whether this process can serve HTTP/3 (node's OpenSSL >= 3.5). */
  http3: boolean;
  /** Why not, or null. */
  http3Reason: string | null;
}>;

export declare const versions: Readonly<{
  /** This package's version. */
  sluice: string;
  /** The llhttp compiled into the addon. */
  llhttp: string;
  nghttp2: string | undefined;
  node: string;
  /** The OpenSSL that runs: node's own. */
  openssl: string;
}>;

/** Debug counters of the native output path (tests, benchmarks); not a stable API. */
export declare function _counters(): Record<string, number>;

/** Counters of this thread's open-file cache (docs/files.md). */
export declare function openFileCacheStats(): OpenFileCacheStats;

/**
 * Files under `root` as a Connect / Express middleware, answered by the
 * native static machinery for requests of a sluice server (HTTP/1.1 and
 * the HTTP/2 compat API); a miss calls `next()`. A request of another
 * server gets `next(err)` with err.code 'ERR_SLUICE_STATIC_NOT_SLUICE'.
 * docs/files.md, "The serveStatic middleware".
 */
export declare function serveStatic(root: string, options?: ServeStaticMiddlewareOptions): StaticMiddleware;

/** The same for Koa: `app.use(sluice.koaServeStatic(root))`. */
export declare function koaServeStatic(root: string, options?: ServeStaticMiddlewareOptions):
  (ctx: { req: http.IncomingMessage; res: http.ServerResponse; respond?: boolean }, next: () => Promise<unknown>) => Promise<unknown>;

// ---- WebSockets (docs/websocket.md) -----------------------------------------

export interface WebSocketServerOptions {
  /** A sluice server whose 'upgrade' events this server answers. */
  server?: Server;
  /** Make and listen a sluice server on this port (plain requests get 426). */
  port?: number;
  host?: string;
  backlog?: number;
  /** Handshakes come only through handleUpgrade. */
  noServer?: boolean;
  /** Only this URL path (query ignored) is accepted; others get 400. */
  path?: string;
  /** Largest message (all its fragments) accepted; larger: close 1009. Default 100 MiB. */
  maxPayload?: number;
  /**
   * permessage-deflate (RFC 7692): `true` or ws's options object, plus
   * (sluice) `sharedCompressor`: publish deflates a message once for every
   * deflate subscriber (server_no_context_takeover is negotiated). Default off.
   */
  perMessageDeflate?: boolean | {
    serverNoContextTakeover?: boolean;
    clientNoContextTakeover?: boolean;
    serverMaxWindowBits?: number | boolean;
    clientMaxWindowBits?: number | boolean;
    threshold?: number;
    zlibDeflateOptions?: { level?: number; memLevel?: number; [k: string]: unknown };
    zlibInflateOptions?: object;
    concurrencyLimit?: number;
    sharedCompressor?: boolean;
  };
  clientTracking?: boolean;
  skipUTF8Validation?: boolean;
  autoPong?: boolean;
  /** Automatic pongs not yet written that a ping may find before the connection is dropped (1006), as ws. 0: no limit. Default 60. */
  maxPendingAutoPongs?: number;
  /** Frames one message may have; the next: close 1008 (WS_ERR_TOO_MANY_BUFFERED_PARTS), as ws. 0: no limit. Default 16384. */
  maxFragments?: number;
  allowSynchronousEvents?: boolean;
  handleProtocols?: (protocols: Set<string>, request: IncomingRequest) => string | false;
  verifyClient?:
    | ((info: { origin: string | undefined; secure: boolean; req: IncomingRequest }) => boolean)
    | ((info: { origin: string | undefined; secure: boolean; req: IncomingRequest },
        callback: (verified: boolean, code?: number, message?: string, headers?: http.OutgoingHttpHeaders) => void) => void);
  /** (sluice) ms a close handshake waits for the peer's close frame. Default 30000. */
  closeTimeout?: number;
  /** (sluice) ms of silence before a ping, then as long again before the connection is closed; 0: off. */
  idleTimeout?: number;
  /** (sluice) send-buffer bytes past which sends are dropped (WS_DROPPED); 0: unbounded. */
  maxBackpressure?: number;
  /** (sluice) with `server` / `port`: also accept WebSockets on the server's HTTP/2 sessions (RFC 8441 extended CONNECT), advertising SETTINGS_ENABLE_CONNECT_PROTOCOL while attached. Default true. */
  http2?: boolean;
  /** (sluice) The pub/sub bus: default (undefined) a MachineAdapter shared by every process serving the same port; false: none; or an adapter (RedisAdapter, your own). */
  pubsub?: false | PubSubAdapter;
}

/** (sluice) What the bus gives an adapter (docs/websocket.md "Adapters"). */
export interface PubSubSink {
  readonly key: { port: number | string | null; path: string };
  deliver(topic: string, packet: Buffer): void;
  dropped(count: number, reason: string): void;
  error(err: Error): void;
  topics(): Set<string>;
}
/** (sluice) A pub/sub bus transport (docs/websocket.md "Adapters"). */
export interface PubSubAdapter {
  attach(sink: PubSubSink): void;
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  publish(topic: string, packet: Buffer): void;
  wants?(topic: string): boolean;
  close(): void;
}
export declare const pubsub: {
  MachineAdapter: new (options?: { dir?: string; maxBuffered?: number }) => PubSubAdapter & { peers(): number };
  RedisAdapter: new (options: { pubClient: unknown; subClient: unknown; prefix?: string; maxPending?: number }) => PubSubAdapter;
};

/** What WebSocket#send / ping / pong return: 0 sent, 1 buffered (a drain follows), 2 dropped (over maxBackpressure), 3 not open. */
export type WebSocketSendResult = 0 | 1 | 2 | 3;

export interface WebSocketSendOptions {
  binary?: boolean;
  /** Accepted for ws compatibility (no compression yet). */
  compress?: boolean;
  fin?: boolean;
  mask?: boolean;
}

export declare class WebSocket extends EventEmitter {
  static readonly CONNECTING: 0;
  static readonly OPEN: 1;
  static readonly CLOSING: 2;
  static readonly CLOSED: 3;
  readonly CONNECTING: 0;
  readonly OPEN: 1;
  readonly CLOSING: 2;
  readonly CLOSED: 3;
  readonly readyState: 0 | 1 | 2 | 3;
  readonly protocol: string;
  readonly extensions: string;
  readonly bufferedAmount: number;
  readonly isPaused: boolean;
  readonly url: undefined;
  binaryType: 'nodebuffer' | 'arraybuffer' | 'fragments' | 'blob';
  send(data: unknown, cb?: (err?: Error) => void): WebSocketSendResult;
  send(data: unknown, options: WebSocketSendOptions, cb?: (err?: Error) => void): WebSocketSendResult;
  ping(data?: unknown, mask?: boolean, cb?: (err?: Error) => void): WebSocketSendResult;
  pong(data?: unknown, mask?: boolean, cb?: (err?: Error) => void): WebSocketSendResult;
  close(code?: number, reason?: string | Buffer): void;
  terminate(): void;
  pause(): void;
  resume(): void;
  /** (sluice) Pub/sub: false when already subscribed (or closed). */
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
  isSubscribed(topic: string): boolean;
  readonly topics: string[];
  /** (sluice) To every subscriber of `topic` but this socket; returns how many it was queued for. */
  publish(topic: string, data: unknown, options?: { binary?: boolean; compress?: boolean }): number;
  onopen: ((ev: { type: string; target: WebSocket }) => void) | null;
  onmessage: ((ev: { type: string; target: WebSocket; data: Buffer | ArrayBuffer | Buffer[] | Blob | string }) => void) | null;
  onclose: ((ev: { type: string; target: WebSocket; code: number; reason: string; wasClean: boolean }) => void) | null;
  onerror: ((ev: { type: string; target: WebSocket; error: Error; message: string }) => void) | null;
  addEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (ev: any) => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'open' | 'message' | 'close' | 'error', listener: (ev: any) => void): void;
  on(event: 'message', listener: (data: Buffer | ArrayBuffer | Buffer[] | Blob, isBinary: boolean) => void): this;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): this;
  on(event: 'ping' | 'pong', listener: (data: Buffer) => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}

export declare class WebSocketServer extends EventEmitter {
  constructor(options: WebSocketServerOptions, callback?: () => void);
  readonly options: WebSocketServerOptions;
  /** The open sockets (with clientTracking, the default). */
  readonly clients: Set<WebSocket>;
  address(): ReturnType<Server['address']>;
  close(cb?: (err?: Error) => void): void;
  shouldHandle(req: IncomingRequest): boolean | Promise<boolean>;
  handleUpgrade(req: IncomingRequest, socket: TunnelSocket, head: Buffer,
    cb: (ws: WebSocket, req: IncomingRequest) => void): void;
  /** (sluice) To every subscriber of `topic`; returns how many it was queued for. */
  publish(topic: string, data: unknown, options?: { binary?: boolean; compress?: boolean }): number;
  /** (sluice) How many sockets of this process are subscribed to `topic`. */
  subscribers(topic: string): number;
  /** (sluice) The pub/sub bus' counters, or null without a bus. */
  pubsubStats(): { published: number; received: number; dropped: number; topics: number } | null;
  on(event: 'connection', listener: (ws: WebSocket, req: IncomingRequest) => void): this;
  on(event: 'headers', listener: (headers: string[], req: IncomingRequest) => void): this;
  on(event: 'wsClientError', listener: (err: Error, socket: TunnelSocket, req: IncomingRequest) => void): this;
  on(event: 'listening' | 'close', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: string | symbol, listener: (...args: any[]) => void): this;
}
