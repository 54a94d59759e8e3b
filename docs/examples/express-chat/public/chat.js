'use strict';
const log = document.getElementById('log');
const ws = new WebSocket(`${location.origin.replace(/^http/, 'ws')}/chat`);
ws.onmessage = (e) => {
  const m = JSON.parse(e.data);
  const p = document.createElement('p');
  p.textContent = m.system ? `(${m.system})` : `${m.worker}: ${m.text}`;
  log.append(p);
};
document.getElementById('form').onsubmit = (e) => {
  e.preventDefault();
  const input = document.getElementById('text');
  if (input.value) ws.send(input.value);
  input.value = '';
};
