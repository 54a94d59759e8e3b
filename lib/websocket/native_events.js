'use strict';

// The NativeServer callbacks of WebSocket connections (src/binding/
// js_websocket.h): each finds the WebSocket and hands it the event. The
// first argument is the native connection (HTTP/1.1: its WebSocket is
// conn[kWebSocket]) or, with a stream id as the last argument, the native
// HTTP/2 session (its WebSockets are the Map session[kWebSocket], by
// stream id). lib/server/server.js adds them to the server's callbacks;
// drain and close reach the WebSocket through the connection state's
// tunnel slot (websocket_server.js, takeOver) or the HTTP/2 stream entry.

const kWebSocket = Symbol('sluice.webSocket');

function wsOf(handle, id) {
  const ws = handle[kWebSocket];
  return id === undefined || ws === undefined ? ws : ws.get(id);
}

function onWsMessage(conn, data, isBinary, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws._onMessage(data, isBinary);
}

function onWsPing(conn, data, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws.emit('ping', data);
}

function onWsPong(conn, data, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws.emit('pong', data);
}

function onWsPeerClose(conn, code, reason, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws._onPeerClose(code, reason);
}

function onWsError(conn, code, reason, id) {
  const ws = wsOf(conn, id);
  if (ws !== undefined) ws._onError(code, reason);
}

const callbacks = { onWsMessage, onWsPing, onWsPong, onWsPeerClose, onWsError };

module.exports = { callbacks, kWebSocket };
