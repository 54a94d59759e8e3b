'use strict';
// The server of the Bun.serve and Deno.serve rows, run by `bun` or
// `deno run` (started by http/peer_server.js, never by node):
//   --mode hello   every request: 'hello' (or --body-size N bytes of 'x'),
//                  as http/hello_server.js's res.end(body)
//   --mode upload  the request body read to its end, then 'ok'
//                  (http/upload_server.js without a pool)
//   --mode file    GET /f: the file --file PATH; Bun: new Response(Bun.file())
//                  (sendfile), Deno: the opened file's readable stream
//   --mode ws      /echo echoes each message (text as text, binary as
//                  binary), /sub subscribes to 'fan', /pub publishes every
//                  message to it (Bun: server.publish; Deno has no pub/sub:
//                  a loop over the subscribers' send(), as ws users write);
//                  any other request: 'ok' (websocket/ws_server.js)
// No compression anywhere; listens on 127.0.0.1:--port.

const argv = typeof Bun !== 'undefined' ? Bun.argv.slice(2) : Deno.args;
const opts = {};
for (let i = 0; i + 1 < argv.length; i += 2) opts[argv[i].slice(2)] = argv[i + 1];
const mode = opts.mode;
const port = Number(opts.port);
const hostname = '127.0.0.1';
const size = Number(opts['body-size'] || 0);
const body = size > 0 ? new Uint8Array(size).fill(0x78) : 'hello';

async function drain(req) {
  if (!req.body) return;
  const reader = req.body.getReader();
  for (;;) {
    const { done } = await reader.read();
    if (done) return;
  }
}

function serveBun() {
  const { file } = opts;
  let handler;
  if (mode === 'hello') handler = () => new Response(body);
  else if (mode === 'upload') handler = async (req) => { await drain(req); return new Response('ok'); };
  else if (mode === 'file') {
    handler = (req) => (new URL(req.url).pathname === '/f' ?
      new Response(Bun.file(file)) : new Response('not found', { status: 404 }));
  } else if (mode === 'ws') {
    handler = (req, server) => {
      const p = new URL(req.url).pathname;
      if ((p === '/echo' || p === '/sub' || p === '/pub') && server.upgrade(req, { data: p })) return undefined;
      return new Response('ok');
    };
  } else throw new Error(`unknown --mode ${mode}`);
  const server = Bun.serve({
    hostname,
    port,
    fetch: handler,
    idleTimeout: 0,
    maxRequestBodySize: 1 << 30,
    websocket: {
      perMessageDeflate: false,
      maxPayloadLength: 1 << 20,
      idleTimeout: 0,
      backpressureLimit: 16 << 20,
      open(ws) { if (ws.data === '/sub') ws.subscribe('fan'); },
      message(ws, m) {
        if (ws.data === '/echo') ws.send(m);
        else if (ws.data === '/pub') server.publish('fan', m);
      },
    },
  });
}

function serveDeno() {
  const { file } = opts;
  const subs = new Set();
  let handler;
  if (mode === 'hello') handler = () => new Response(body);
  else if (mode === 'upload') handler = async (req) => { await drain(req); return new Response('ok'); };
  else if (mode === 'file') {
    handler = async (req) => {
      if (new URL(req.url).pathname !== '/f') return new Response('not found', { status: 404 });
      const f = await Deno.open(file);
      return new Response(f.readable);
    };
  } else if (mode === 'ws') {
    handler = (req) => {
      const p = new URL(req.url).pathname;
      if (req.headers.get('upgrade') !== 'websocket' || !(p === '/echo' || p === '/sub' || p === '/pub')) {
        return new Response('ok');
      }
      const { socket, response } = Deno.upgradeWebSocket(req, { idleTimeout: 0 });
      socket.binaryType = 'arraybuffer';
      if (p === '/echo') socket.onmessage = (e) => socket.send(e.data);
      else if (p === '/sub') {
        socket.onopen = () => subs.add(socket);
        socket.onclose = () => subs.delete(socket);
      } else {
        socket.onmessage = (e) => { for (const s of subs) s.send(e.data); };
      }
      socket.onerror = () => {};
      return response;
    };
  } else throw new Error(`unknown --mode ${mode}`);
  Deno.serve({ hostname, port, onListen() {} }, handler);
}

if (typeof Bun !== 'undefined') serveBun();
else serveDeno();
