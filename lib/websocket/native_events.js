'use strict';

// The NativeServer callbacks of WebSocket connections (src/binding/
// js_websocket.h): each finds the connection's WebSocket and hands it the
// event. lib/server/server.js adds them to the server's callbacks; drain and
// close reach the WebSocket through the connection state's tunnel slot
// (websocket_server.js, takeOver).

const kWebSocket = Symbol('sluice.webSocket');

function onWsMessage(conn, data, isBinary) {
  const ws = conn[kWebSocket];
  if (ws !== undefined) ws._onMessage(data, isBinary);
}

function onWsPing(conn, data) {
  const ws = conn[kWebSocket];
  if (ws !== undefined) ws.emit('ping', data);
}

function onWsPong(conn, data) {
  const ws = conn[kWebSocket];
  if (ws !== undefined) ws.emit('pong', data);
}

function onWsPeerClose(conn, code, reason) {
  const ws = conn[kWebSocket];
  if (ws !== undefined) ws._onPeerClose(code, reason);
}

function onWsError(conn, code, reason) {
  const ws = conn[kWebSocket];
  if (ws !== undefined) ws._onError(code, reason);
}

const callbacks = { onWsMessage, onWsPing, onWsPong, onWsPeerClose, onWsError };

module.exports = { callbacks, kWebSocket };
