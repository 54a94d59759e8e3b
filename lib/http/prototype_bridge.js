'use strict';

// Prototype bridge: lets frameworks that re-parent req/res (Express sets
// Object.setPrototypeOf(req, app.request), where app.request chains to
// http.IncomingMessage.prototype) serve sluice's objects unmodified.
//
// Two parts (docs/compat.md):
// - sluice's IncomingRequest.prototype / ServerResponse.prototype chain to
//   node's IncomingMessage.prototype / ServerResponse.prototype, so
//   `instanceof` holds; node members sluice does not implement are shadowed
//   (see shadow()) so they cannot run against state sluice never set up.
// - adopt(app), once per app when it becomes a request listener: the part of
//   app.request's chain between app.request and node's prototype (Express's
//   shared request/response objects) is copied once for this app and
//   re-chained onto a bridge object whose every member dispatches on the
//   receiver: a sluice object (own kConn) gets sluice's member, anything
//   else (a node:http request served by the same app) gets node's. Requests
//   of apps that never swap prototypes never meet the bridge: no cost.

// The seam: this file requires neither request.js nor http/response.js. Each of
// them installs its class here when it loads (install()), and the bridges
// are built from the installed classes on first use; so the message files
// depend on the bridge, never the other way round.

const http = require('http');
const { kConn } = require('../common/symbols');

// Members of node's prototypes that sluice's classes must not inherit: node
// internals that poke state sluice does not have (res._send, res._storeHeader,
// ...). Shadowed by undefined, as they were before the chain existed.
const hiddenResponse = [
  '_finish', 'assignSocket', 'detachSocket', '_renderHeaders', '_send',
  '_writeRaw', '_storeHeader', '_flush', '_flushOutput', '_headers',
  '_headerNames',
];
const hiddenRequest = ['_addHeaderLines', '_addHeaderLine', '_addHeaderLineDistinct'];

// Data properties sluice's constructors assign where node's prototypes hold
// accessors (a getter-only accessor would make the assignment throw; a
// setter would store the value in node's private slots).
// (IncomingRequest defines its own trailers accessor, as node's.)
const requestData = [];
const responseData = ['headersSent', 'writableEnded'];

function shadow(proto, hidden, data) {
  for (const name of hidden) {
    Object.defineProperty(proto, name, {
      value: undefined, writable: true, configurable: true, enumerable: false,
    });
  }
  for (const name of data) {
    if (Object.prototype.hasOwnProperty.call(proto, name)) continue;
    Object.defineProperty(proto, name, {
      value: undefined, writable: true, configurable: true, enumerable: false,
    });
  }
}

// The two kinds of message object: node's prototype each chains to, and the
// node members each must not inherit.
const kinds = {
  IncomingMessage: {
    nodeProto: http.IncomingMessage.prototype, hidden: hiddenRequest, data: requestData, cls: null,
  },
  ServerResponse: {
    nodeProto: http.ServerResponse.prototype, hidden: hiddenResponse, data: responseData, cls: null,
  },
};

// Called once by request.js / http/response.js when they load: chains
// `cls.prototype` to node's prototype of that kind (the class constructor
// keeps its own parent: `super()` still runs the cheap Readable/Stream
// constructor) and records the class for the bridges. Objects of `cls` carry
// their transport as an own kConn property, which is how a bridge tells them
// from node's.
function install(kind, cls) {
  const k = kinds[kind];
  Object.setPrototypeOf(cls.prototype, k.nodeProto);
  shadow(cls.prototype, k.hidden, k.data);
  k.cls = cls;
}

// A bridge: an object chained to nodeProto with an accessor for every member
// of sluiceProto and of its variants; the accessor resolves the member on
// the object's own sluice prototype for sluice objects (marker own
// property: the object's transport) and on nodeProto for anything else,
// with the receiver as `this` (getters and methods both work). The own
// prototype is sluiceProto unless the transport names a variant
// (kVariant: HTTP/2's compat request and response, installVariant).
function makeBridge(sluiceProto, nodeProto, marker, which) {
  const bridge = Object.create(nodeProto);
  const keys = new Set(Reflect.ownKeys(sluiceProto));
  for (const v of variants) {
    for (let p = v[which]; p !== sluiceProto; p = Object.getPrototypeOf(p)) {
      for (const key of Reflect.ownKeys(p)) keys.add(key);
    }
  }
  keys.delete('constructor');
  const protoOf = (self) => {
    const t = self[marker];
    if (t === undefined) return nodeProto;
    const v = t[kVariant];
    return v === undefined ? sluiceProto : v[which];
  };
  for (const key of keys) {
    Object.defineProperty(bridge, key, {
      configurable: true,
      enumerable: false,
      get() {
        return Reflect.get(protoOf(this), key, this);
      },
      set(v) {
        if (!Reflect.set(protoOf(this), key, v, this)) {
          throw new TypeError(`Cannot assign to read only property '${String(key)}'`);
        }
      },
    });
  }
  return bridge;
}

// Subclasses of the two sluice classes a transport's messages are made of
// (lib/http2/session.js: Http2ServerRequest / Http2ServerResponse over a
// StreamConn). Their members stay theirs when an app re-parents the
// objects: the transport's prototype carries kVariant, { request,
// response } prototypes, and the bridges resolve members there.
const kVariant = Symbol('sluice.messageVariant');
const variants = [];

// Called when the module defining the variant loads, before any bridge
// is built (bridges are built at the first adopt(), once servers exist).
function installVariant(transportClass, requestClass, responseClass) {
  const v = { request: requestClass.prototype, response: responseClass.prototype };
  transportClass.prototype[kVariant] = v;
  variants.push(v);
}

let bridges = null;

function getBridges() {
  if (bridges === null) {
    const req = kinds.IncomingMessage;
    const res = kinds.ServerResponse;
    bridges = {
      request: makeBridge(req.cls.prototype, req.nodeProto, kConn, 'request'),
      response: makeBridge(res.cls.prototype, res.nodeProto, kConn, 'response'),
    };
  }
  return bridges;
}

// Re-chains `target` (an app's own request/response prototype) through the
// bridge. Returns false when target does not chain to nodeProto.
function bridgeChain(target, nodeProto, bridge) {
  const between = [];
  let p = Object.getPrototypeOf(target);
  while (p !== null && p !== nodeProto) {
    if (p === bridge) return true;  // adopted already (or a mounted sub-app)
    between.push(p);
    p = Object.getPrototypeOf(p);
  }
  if (p === null) return false;
  // Copy the shared objects between target and node's prototype (Express's
  // module-level `request` / `response`) for this app, so other apps and
  // node:http requests of other apps keep the originals.
  let prev = bridge;
  for (let i = between.length - 1; i >= 0; i--) {
    prev = Object.create(prev, Object.getOwnPropertyDescriptors(between[i]));
  }
  Object.setPrototypeOf(target, prev);
  return true;
}

function isProtoObject(o, nodeProto) {
  return o !== null && typeof o === 'object' && nodeProto.isPrototypeOf(o);
}

// A request listener that re-parents req/res (Express 4/5 and apps mounted
// the same way): `request` / `response` objects inheriting from node's
// prototypes. Adopted once; anything else is left alone.
function adopt(listener) {
  if (typeof listener !== 'function') return false;
  const reqProto = listener.request;
  const resProto = listener.response;
  if (!isProtoObject(reqProto, http.IncomingMessage.prototype) ||
      !isProtoObject(resProto, http.ServerResponse.prototype)) {
    return false;
  }
  const b = getBridges();
  bridgeChain(reqProto, http.IncomingMessage.prototype, b.request);
  bridgeChain(resProto, http.ServerResponse.prototype, b.response);
  return true;
}

// createServer's IncomingMessage / ServerResponse options: a class
// extending node's (class MyReq extends http.IncomingMessage). sluice's
// objects are then made with the class as new.target (its prototype; the
// class's constructor does not run: sluice's does), so the base of its
// chain — the prototype that inherits node's directly — is re-chained
// onto the bridge: the class's members come first, then sluice's, then
// node's, and node:http objects of the same class still get node's.
// Returns the class, or null for node's own class (nothing to do).
function adoptClass(cls, kind) {
  const isRequest = kind === 'IncomingMessage';
  const { nodeProto, cls: own } = kinds[kind];
  if (cls === undefined || cls === null || cls.prototype === nodeProto) return null;
  if (typeof cls !== 'function' || cls.prototype === null || typeof cls.prototype !== 'object' ||
      !nodeProto.isPrototypeOf(cls.prototype)) {
    const err = new TypeError(`The "options.${kind}" property must be a class extending http.${kind}`);
    err.code = 'ERR_INVALID_ARG_TYPE';
    throw err;
  }
  if (own.prototype.isPrototypeOf(cls.prototype) || cls.prototype === own.prototype) return cls;
  const bridge = isRequest ? getBridges().request : getBridges().response;
  let base = cls.prototype;
  for (let p = Object.getPrototypeOf(base); p !== nodeProto; p = Object.getPrototypeOf(p)) {
    if (p === bridge) return cls;  // adopted already
    base = p;
  }
  Object.setPrototypeOf(base, bridge);
  return cls;
}

// The server: sluice's Server.prototype chains to node's http.Server.prototype
// (then net.Server's, then EventEmitter's), as its messages chain to
// node's. Tracers that patch http.Server.prototype.emit when 'http' is
// loaded (OpenTelemetry's instrumentation-http, dd-trace) then see every
// event sluice's servers emit, whenever they patch it; with nothing
// patched the lookup ends at EventEmitter.prototype.emit as before (a
// stable chain: V8's inline caches keep the per-event cost). node's
// members sluice does not implement (net.Server's _listen2,
// _setupWorker, its transfer hooks) are shadowed, as for the messages;
// `emit` never is.
function installServer(cls) {
  const own = new Set(Reflect.ownKeys(cls.prototype));
  const hidden = [];
  for (const proto of [http.Server.prototype, Object.getPrototypeOf(http.Server.prototype)]) {
    for (const key of Reflect.ownKeys(proto)) {
      if (key !== 'constructor' && key !== 'emit' && !own.has(key)) hidden.push(key);
    }
  }
  Object.setPrototypeOf(cls.prototype, http.Server.prototype);
  shadow(cls.prototype, hidden, []);
}

module.exports = { install, installVariant, adopt, adoptClass, installServer };
