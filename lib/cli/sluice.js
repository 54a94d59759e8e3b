#!/usr/bin/env node
'use strict';

// `npx sluice [dir]`: a static file server for a folder on sluice's native
// static path (docs/cli.md). Files are answered by a native mount
// (server.serveStatic): no JS per hit. What the mount leaves to JS — a
// missing file, a directory without its slash or without an index — comes
// to the request handler below (SPA fallback, listing, redirect, 404).
// --log and --cors need JS on every request (a log line, a header), so they
// switch to the serveStatic middleware, which answers from the same native
// lookup and file pipe but runs after the handler's own code.

const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');

const HELP = `Usage: sluice [options] [dir]

Serves the files under dir (default: the current folder) over HTTP/1.1 and
HTTP/2 (h2c) on one port; with --tls, HTTPS + HTTP/2 and, where this Node
supports it, HTTP/3 on the same port number (UDP).

Options:
  -p, --port <n>     port (default: $PORT or 3000)
  -H, --host <addr>  address to listen on (default: all)
  -s, --single       serve index.html for paths that match no file (SPA)
  -l, --list         list a directory that has no index.html
  -C, --cors         Access-Control-Allow-Origin: * on every answer
  -L, --log          one line per request on stdout
  -c, --cache <s>    Cache-Control max-age in seconds (default: 0)
      --no-compression  no on-the-fly compression (precompressed .br/.gz
                     siblings are still served)
      --follow-symlinks serve symbolic links that lead out of dir
      --tls          HTTPS; with --cert and --key, or a development
                     certificate for localhost made with the openssl CLI
      --cert <file>  certificate (PEM)
      --key <file>   private key (PEM)
      --no-http3     with --tls, no HTTP/3 even where Node supports it
  -h, --help         this text
  -v, --version      sluice's version

Examples:
  npx sluice                     # the current folder on http://localhost:3000
  npx sluice dist --single -p 8080
  npx sluice public --tls --log
`;

const FLAGS = {
  '-s': 'single', '--single': 'single',
  '-l': 'list', '--list': 'list',
  '-C': 'cors', '--cors': 'cors',
  '-L': 'log', '--log': 'log',
  '--tls': 'tls',
  '--no-compression': 'noCompression',
  '--follow-symlinks': 'followSymlinks',
  '--no-http3': 'noHttp3',
  '-h': 'help', '--help': 'help',
  '-v': 'version', '--version': 'version',
};
const VALUES = {
  '-p': 'port', '--port': 'port',
  '-H': 'host', '--host': 'host',
  '-c': 'cache', '--cache': 'cache',
  '--cert': 'cert', '--key': 'key',
};

class UsageError extends Error {}

// argv (after the script) -> options; throws UsageError with the reason.
function parseArgs(argv, env) {
  const o = { dir: undefined };
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let inline;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) {
      inline = a.slice(eq + 1);
      a = a.slice(0, eq);
    }
    if (FLAGS[a] !== undefined && inline === undefined) {
      o[FLAGS[a]] = true;
    } else if (VALUES[a] !== undefined) {
      const v = inline !== undefined ? inline : argv[++i];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      o[VALUES[a]] = v;
    } else if (a.startsWith('-') && a !== '-') {
      throw new UsageError(`unknown option ${argv[i]}`);
    } else if (o.dir === undefined) {
      o.dir = a;
    } else {
      throw new UsageError(`one folder only (got ${o.dir} and ${a})`);
    }
  }
  const port = o.port !== undefined ? o.port : (env.PORT || '3000');
  if (!/^\d+$/.test(String(port)) || Number(port) > 65535) {
    throw new UsageError(`the port must be a number from 0 to 65535 (got ${port})`);
  }
  o.port = Number(port);
  const cache = o.cache !== undefined ? o.cache : '0';
  if (!/^\d+$/.test(cache)) throw new UsageError(`--cache takes seconds (got ${cache})`);
  o.cache = Number(cache);
  if ((o.cert === undefined) !== (o.key === undefined)) {
    throw new UsageError('--cert and --key go together');
  }
  if (o.cert !== undefined) o.tls = true;
  o.dir = path.resolve(o.dir === undefined ? '.' : o.dir);
  return o;
}

// The folder must be a directory this process can list and enter.
function checkRoot(dir) {
  let st;
  try {
    st = fs.statSync(dir);
  } catch (e) {
    throw new UsageError(`cannot serve ${dir}: ${e.code === 'ENOENT' ? 'no such folder' : e.message}`);
  }
  if (!st.isDirectory()) throw new UsageError(`cannot serve ${dir}: not a folder`);
  try {
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.X_OK);
    fs.readdirSync(dir);
  } catch (e) {
    throw new UsageError(`cannot serve ${dir}: not readable (${e.code})`);
  }
  return fs.realpathSync(dir);
}

// A self-signed certificate for localhost, 127.0.0.1 and ::1, made with the
// openssl CLI (node's crypto makes keys but not X.509 certificates), in a
// temporary folder that is removed at once: the PEMs live in memory only.
function developmentCertificate() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cert-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256',
      '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '30', '-subj', '/CN=localhost',
      '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1'],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    return { key: fs.readFileSync(path.join(dir, 'key.pem')), cert: fs.readFileSync(path.join(dir, 'cert.pem')) };
  } catch (e) {
    const why = e.code === 'ENOENT' ? 'the openssl command was not found' : String(e.stderr || e.message).trim();
    throw new UsageError(`--tls without --cert/--key makes a development certificate with openssl: ${why}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// The request path as segments, decoded; null if it cannot name a file
// beneath the root (bad escape, NUL, backslash, '..' or a dot segment: the
// native mount has already answered those with 400 / 403 where it sees
// them; this is the same rule for what reaches JS).
function pathSegments(url) {
  const cut = url.search(/[?#]/);
  const raw = cut < 0 ? url : url.slice(0, cut);
  if (!raw.startsWith('/')) return null;
  const out = [];
  for (const seg of raw.split('/')) {
    if (seg === '') continue;
    let s;
    try {
      s = decodeURIComponent(seg);
    } catch {
      return null;
    }
    if (s.startsWith('.') || /[\0/\\]/.test(s)) return null;
    out.push(s);
  }
  return { segments: out, slash: raw.endsWith('/') };
}

// The directory a path names, if it is one beneath the root after every
// symbolic link is resolved (unless followSymlinks); else null.
function directoryBeneath(root, segments, followSymlinks) {
  const p = path.join(root, ...segments);
  try {
    const real = fs.realpathSync(p);
    if (!followSymlinks && real !== root && !real.startsWith(root + path.sep)) return null;
    return fs.statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

function listing(urlPath, dir) {
  const entries = fs.readdirSync(dir, { withFileTypes: true })
    .filter((e) => !e.name.startsWith('.'))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .sort();
  if (urlPath !== '/') entries.unshift('../');
  const items = entries.map((n) => `<li><a href="${escapeHtml(encodeURIComponent(n.replace(/\/$/, '')) +
    (n.endsWith('/') ? '/' : ''))}">${escapeHtml(n)}</a></li>`).join('\n');
  const title = escapeHtml(`Index of ${urlPath}`);
  return `<!doctype html>\n<meta charset="utf-8">\n<title>${title}</title>\n<h1>${title}</h1>\n<ul>\n${items}\n</ul>\n`;
}

function send(res, status, type, body, head) {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(head ? undefined : body);
}

// What JS answers when no file did: 405 for other methods, the directory
// redirect, the listing (--list), index.html (--single), else 404.
function fallback(o, root, req, res) {
  const head = req.method === 'HEAD';
  if (req.method !== 'GET' && !head) {
    res.setHeader('Allow', 'GET, HEAD');
    send(res, 405, 'text/plain; charset=utf-8', 'Method Not Allowed\n', false);
    return;
  }
  const p = pathSegments(req.url);
  const dir = p === null ? null : directoryBeneath(root, p.segments, o.followSymlinks);
  if (dir !== null && !p.slash) {
    const cut = req.url.search(/[?#]/);
    const [pathname, search] = cut < 0 ? [req.url, ''] : [req.url.slice(0, cut), req.url.slice(cut)];
    res.setHeader('Location', `${pathname.replace(/^\/+/, '/')}/${search}`);
    send(res, 301, 'text/plain; charset=utf-8', 'Moved Permanently\n', head);
    return;
  }
  if (dir !== null && o.list) {
    send(res, 200, 'text/html; charset=utf-8', listing(`/${p.segments.join('/')}${p.segments.length ? '/' : ''}`, dir), head);
    return;
  }
  if (o.single && o.spaIndex) {
    res.setHeader('Cache-Control', 'no-cache');
    res.respondWithFile(o.spaIndex, { 'content-type': 'text/html; charset=utf-8' });
    return;
  }
  send(res, 404, 'text/plain; charset=utf-8', 'Not Found\n', head);
}

function corsHeaders(res) {
  res.setHeader('Access-Control-Allow-Origin', '*');
}

function logLine(req, res, start) {
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const addr = req.socket && req.socket.remoteAddress;
  process.stdout.write(`${new Date().toISOString()} ${addr || '-'} HTTP/${req.httpVersion} ` +
    `${req.method} ${req.url} ${res.statusCode} ${ms.toFixed(1)} ms\n`);
}

function createStaticServer(sluice, o) {
  const root = o.root;
  const spaIndex = path.join(root, 'index.html');
  o.spaIndex = fs.existsSync(spaIndex) ? spaIndex : null;
  const staticOptions = {
    maxAge: o.cache * 1000,
    precompressed: true,
    followSymlinks: !!o.followSymlinks,
    dotfiles: 'ignore',
  };
  const perRequestJs = o.log || o.cors;
  const middleware = perRequestJs ? sluice.serveStatic(root, {
    ...staticOptions,
    redirect: true,
    // Client errors (403 for a link out of the folder, 400...) come to
    // next(err) so they are not taken for a miss; 404 is the miss.
    fallthrough: false,
    setHeaders: o.cors ? corsHeaders : undefined,
  }) : null;

  const handler = (req, res) => {
    if (o.log) {
      const start = process.hrtime.bigint();
      res.on('finish', () => logLine(req, res, start));
    }
    if (o.cors) {
      corsHeaders(res);
      if (req.method === 'OPTIONS') {
        res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, OPTIONS');
        res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] || '*');
        res.setHeader('Access-Control-Max-Age', '86400');
        res.statusCode = 204;
        res.end();
        return;
      }
    }
    if (middleware !== null) {
      middleware(req, res, (err) => {
        if (err && err.status === 404) {
          fallback(o, root, req, res);
        } else if (err && err.status) {
          if (err.headers) for (const k of Object.keys(err.headers)) res.setHeader(k, err.headers[k]);
          send(res, err.status, 'text/plain; charset=utf-8', `${err.message}\n`, req.method === 'HEAD');
        } else if (err) {
          send(res, 500, 'text/plain; charset=utf-8', 'Internal Server Error\n', req.method === 'HEAD');
        } else {
          fallback(o, root, req, res);
        }
      });
    } else {
      fallback(o, root, req, res);
    }
  };

  const serverOptions = { compression: !o.noCompression };
  let server;
  if (o.tls) {
    const tls = o.cert !== undefined ?
      { cert: fs.readFileSync(o.cert), key: fs.readFileSync(o.key) } : developmentCertificate();
    o.http3 = !o.noHttp3 && sluice.features.http3;
    server = sluice.createSecureServer({ ...serverOptions, ...tls, ...(o.http3 ? { http3: true } : {}) }, handler);
  } else {
    server = sluice.createServer(serverOptions, handler);
  }
  if (middleware === null) server.serveStatic('/', root, staticOptions);
  return server;
}

function readCertFiles(o) {
  for (const f of [o.cert, o.key]) {
    if (f === undefined) continue;
    try {
      fs.accessSync(f, fs.constants.R_OK);
    } catch (e) {
      throw new UsageError(`cannot read ${f} (${e.code})`);
    }
  }
}

function main(argv) {
  let o;
  try {
    o = parseArgs(argv, process.env);
    if (o.help) {
      process.stdout.write(HELP);
      return;
    }
    const sluice = require('..');
    if (o.version) {
      process.stdout.write(`${sluice.versions.sluice}\n`);
      return;
    }
    o.root = checkRoot(o.dir);
    readCertFiles(o);
    const server = createStaticServer(sluice, o);
    run(sluice, server, o);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`sluice: ${e.message}\n${e.message.includes('option') ? 'Try sluice --help.\n' : ''}`);
    process.exitCode = 2;
  }
}

function run(sluice, server, o) {
  server.on('error', (e) => {
    const where = o.host ? `${o.host}:${o.port}` : `port ${o.port}`;
    const why = e.code === 'EADDRINUSE' ? `${where} is already in use; choose another with --port` :
      e.code === 'EACCES' ? `no permission to listen on ${where} (ports below 1024 need privileges)` :
        e.code === 'EADDRNOTAVAIL' ? `${o.host} is not an address of this machine` : e.message;
    process.stderr.write(`sluice: ${why}\n`);
    process.exit(1);
  });
  server.listen(o.port, o.host, () => {
    const port = server.address().port;
    const scheme = o.tls ? 'https' : 'http';
    const protocols = o.tls ? 'HTTP/1.1, HTTP/2' + (o.http3 ? ', HTTP/3 (UDP)' : '') : 'HTTP/1.1, HTTP/2 (h2c)';
    const lines = [`sluice: serving ${o.root}`, `  ${scheme}://localhost:${port}  (${protocols})`];
    if (o.tls && !o.http3 && !o.noHttp3) lines.push(`  HTTP/3: off (${sluice.features.http3Reason})`);
    if (o.tls && o.cert === undefined) lines.push('  TLS: a self-signed development certificate for localhost');
    const modes = [o.single && 'SPA fallback', o.list && 'directory listing', o.cors && 'CORS', o.log && 'log'];
    if (modes.some(Boolean)) lines.push(`  ${modes.filter(Boolean).join(', ')}`);
    process.stderr.write(`${lines.join('\n')}\n`);
  });
  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(130);
    stopping = true;
    server.close(() => process.exit(0));
    server.closeIdleConnections();
    setTimeout(() => server.closeAllConnections(), 2000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

module.exports = { parseArgs, pathSegments, createStaticServer };

if (require.main === module) main(process.argv.slice(2));
