'use strict';

// permessage-deflate (RFC 7692) negotiation for the server, as ws's
// PerMessageDeflate.acceptAsServer decides it: the first offer the
// options can accept, with the options' own parameters added. The
// compression itself is native (src/core/websocket/ws_deflate.h); this
// only parses Sec-WebSocket-Extensions and answers it.

const tokenRegex = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

// Sec-WebSocket-Extensions -> { name: [params, ...] } (params: { key:
// value | true }). Throws SyntaxError on anything malformed, TypeError on
// a repeated parameter.
function parseExtensions(header) {
  const offers = Object.create(null);
  for (const offer of header.split(',')) {
    const parts = offer.split(';').map((p) => p.trim());
    const name = parts[0];
    if (!tokenRegex.test(name)) throw new SyntaxError('Invalid extension name');
    const params = Object.create(null);
    for (const p of parts.slice(1)) {
      const eq = p.indexOf('=');
      const key = (eq === -1 ? p : p.slice(0, eq)).trim();
      let value = eq === -1 ? true : p.slice(eq + 1).trim();
      if (!tokenRegex.test(key)) throw new SyntaxError('Invalid parameter name');
      if (value !== true) {
        if (value.length >= 2 && value[0] === '"' && value[value.length - 1] === '"') value = value.slice(1, -1);
        if (!tokenRegex.test(value)) throw new SyntaxError('Invalid parameter value');
      }
      if (key in params) throw new TypeError(`Duplicate parameter "${key}"`);
      params[key] = value;
    }
    (offers[name] || (offers[name] = [])).push(params);
  }
  return offers;
}

// ws's normalizeParams: every parameter known and well-formed.
function normalize(params) {
  for (const key of Object.keys(params)) {
    let value = params[key];
    if (key === 'client_max_window_bits') {
      if (value !== true) {
        const n = +value;
        if (!Number.isInteger(n) || n < 8 || n > 15) throw new TypeError(`Invalid value for parameter "${key}": ${value}`);
        value = n;
      }
    } else if (key === 'server_max_window_bits') {
      const n = +value;
      if (!Number.isInteger(n) || n < 8 || n > 15) throw new TypeError(`Invalid value for parameter "${key}": ${value}`);
      value = n;
    } else if (key === 'client_no_context_takeover' || key === 'server_no_context_takeover') {
      if (value !== true) throw new TypeError(`Invalid value for parameter "${key}": ${value}`);
    } else {
      throw new Error(`Unknown parameter "${key}"`);
    }
    params[key] = value;
  }
  return params;
}

// The accepted parameters for `offers` (the permessage-deflate offers of
// one request) under the server's options; throws when none can be.
function accept(options, offers) {
  const opts = options === true ? {} : options;
  offers = offers.map(normalize);
  const accepted = offers.find((params) => !(
    (opts.serverNoContextTakeover === false && params.server_no_context_takeover) ||
    (params.server_max_window_bits && (opts.serverMaxWindowBits === false ||
      (typeof opts.serverMaxWindowBits === 'number' && opts.serverMaxWindowBits > params.server_max_window_bits))) ||
    (typeof opts.clientMaxWindowBits === 'number' && !params.client_max_window_bits)));
  if (!accepted) throw new Error('None of the extension offers can be accepted');
  // sharedCompressor: every deflate connection is answered
  // server_no_context_takeover (RFC 7692 7.1.1.1 lets a server add it to
  // any offer), so one message deflated from a fresh context suits all.
  if (opts.serverNoContextTakeover || opts.sharedCompressor) accepted.server_no_context_takeover = true;
  if (opts.clientNoContextTakeover) accepted.client_no_context_takeover = true;
  if (typeof opts.serverMaxWindowBits === 'number') accepted.server_max_window_bits = opts.serverMaxWindowBits;
  if (typeof opts.clientMaxWindowBits === 'number') {
    accepted.client_max_window_bits = opts.clientMaxWindowBits;
  } else if (accepted.client_max_window_bits === true || opts.clientMaxWindowBits === false) {
    delete accepted.client_max_window_bits;
  }
  return accepted;
}

// The response's Sec-WebSocket-Extensions value for `accepted`.
function format(accepted) {
  return ['permessage-deflate', ...Object.keys(accepted).map((k) =>
    (accepted[k] === true ? k : `${k}=${accepted[k]}`))].join('; ');
}

// The window of the shared compressor's deflater: the server's
// serverMaxWindowBits, or zlib's largest.
function sharedWindowBits(opts) {
  return typeof opts.serverMaxWindowBits === 'number' ? opts.serverMaxWindowBits : 15;
}

// What new NativeWsHub() reads for the server's options: the shared
// compressor's config, or undefined when the option is off.
function sharedConfig(options) {
  const opts = options === true ? {} : options;
  if (!opts || !opts.sharedCompressor) return undefined;
  return nativeConfig(opts, {
    server_no_context_takeover: true,
    server_max_window_bits: sharedWindowBits(opts),
  });
}

// What wsAccept reads (config.deflate) for `accepted` under `options`.
function nativeConfig(options, accepted) {
  const opts = options === true ? {} : options;
  const zlib = opts.zlibDeflateOptions || {};
  const serverMaxWindowBits = accepted.server_max_window_bits || 15;
  return {
    serverNoContextTakeover: !!accepted.server_no_context_takeover,
    clientNoContextTakeover: !!accepted.client_no_context_takeover,
    serverMaxWindowBits,
    clientMaxWindowBits: accepted.client_max_window_bits || 15,
    // As ws: zlib's default level unless zlibDeflateOptions says.
    level: typeof zlib.level === 'number' ? zlib.level : -1,
    memLevel: typeof zlib.memLevel === 'number' ? zlib.memLevel : 8,
    threshold: typeof opts.threshold === 'number' ? opts.threshold : 1024,
    // Takes the hub's shared frames: no context takeover (forced above)
    // and a window the hub's deflater fits in. A client that limited
    // server_max_window_bits below it is served its own compression.
    shared: !!opts.sharedCompressor && !!accepted.server_no_context_takeover &&
      serverMaxWindowBits >= sharedWindowBits(opts),
  };
}

module.exports = { parseExtensions, accept, format, nativeConfig, sharedConfig };
