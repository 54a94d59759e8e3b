'use strict';

// Which transport carries the machine bus (lib/websocket/pubsub/
// machine_adapter.js): one worker sends N messages of `size` bytes (a topic
// and a packet) to another, through
//   ipc      node's cluster IPC, relayed by the primary (process.send, the
//            'json' or 'advanced' serialization), as a cluster adapter does
//   uds      a Unix-domain socket between the two workers, length-prefixed
//            frames, corked per tick (what the machine adapter writes)
// Prints messages/s and the CPU of all three processes per message.
//   node benchmark/websocket/_bus_transport.js [--n 200000] [--size 100]

const cluster = require('node:cluster');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? dflt : Number(process.argv[i + 1]);
};
const N = arg('n', 200000);
const SIZE = arg('size', 100);
const BATCH = 500;

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

if (cluster.isPrimary) {
  const run = (mode, serialization) => new Promise((resolve) => {
    cluster.setupPrimary({ serialization: serialization || 'json', args: [mode] });
    const sock = path.join(os.tmpdir(), `sluice-bus-bench-${process.pid}.sock`);
    try { fs.unlinkSync(sock); } catch {}
    const env = { BUS_SOCK: sock };
    const receiver = cluster.fork({ ...env, ROLE: 'receiver' });
    let sender;
    const c0 = cpuMs();
    let result = null;
    const cpus = [];
    const done = () => {
      if (result === null || cpus.length < 2) return;
      const primaryCpu = cpuMs() - c0;
      const total = cpus[0] + cpus[1] + (mode === 'ipc' ? primaryCpu : 0);
      receiver.kill();
      sender.kill();
      resolve({ mode: mode + (serialization ? `/${serialization}` : ''), rate: N / (result / 1000), cpuPerMsgUs: total * 1000 / N });
    };
    receiver.on('message', (m) => {
      if (m.ready) {
        sender = cluster.fork({ ...env, ROLE: 'sender' });
        sender.on('message', (s) => {
          if (s.relay !== undefined) receiver.send(s.relay);
          else if (s.cpu !== undefined) { cpus.push(s.cpu); done(); }
        });
      } else if (m.elapsed !== undefined) {
        result = m.elapsed;
        cpus.push(m.cpu);
        sender.send({ report: true });
        done();
      } else if (m.relay !== undefined) {
        // not used
      }
    });
  });
  (async () => {
    const rows = [];
    rows.push(await run('ipc'));
    rows.push(await run('ipc', 'advanced'));
    rows.push(await run('uds'));
    console.log(`bus transport, ${N} messages of ${SIZE} bytes, sender -> receiver worker`);
    console.log('transport        msgs/s      CPU µs/msg (all processes)');
    for (const r of rows) console.log(`${r.mode.padEnd(16)} ${Math.round(r.rate).toString().padStart(9)}   ${r.cpuPerMsgUs.toFixed(2)}`);
  })();
} else {
  const mode = process.argv[2];
  const role = process.env.ROLE;
  const payload = Buffer.alloc(SIZE, 97);
  const topic = 'room';
  if (role === 'receiver') {
    let got = 0;
    let t0 = 0;
    let c0 = 0;
    const count = () => {
      if (got === 0) { t0 = performance.now(); c0 = cpuMs(); }
      if (++got === N) process.send({ elapsed: performance.now() - t0, cpu: cpuMs() - c0 });
    };
    if (mode === 'ipc') {
      process.on('message', (m) => { if (m.t !== undefined) count(); });
      process.send({ ready: true });
    } else {
      let pending = Buffer.alloc(0);
      net.createServer((s) => s.on('data', (d) => {
        pending = pending.length ? Buffer.concat([pending, d]) : d;
        let off = 0;
        while (pending.length - off >= 4) {
          const len = pending.readUInt32BE(off);
          if (pending.length - off < 4 + len) break;
          off += 4 + len;
          count();
        }
        pending = pending.subarray(off);
      })).listen(process.env.BUS_SOCK, () => process.send({ ready: true }));
    }
  } else {
    const c0 = cpuMs();
    process.on('message', (m) => { if (m.report) process.send({ cpu: cpuMs() - c0 }); });
    let sent = 0;
    if (mode === 'ipc') {
      const send = () => {
        for (let i = 0; i < BATCH && sent < N; i++, sent++) process.send({ relay: { t: topic, d: payload.toString('latin1') } });
        if (sent < N) setImmediate(send);
      };
      send();
    } else {
      const s = net.connect(process.env.BUS_SOCK, () => {
        const topicBuf = Buffer.from(topic);
        const send = () => {
          s.cork();
          for (let i = 0; i < BATCH && sent < N; i++, sent++) {
            const h = Buffer.allocUnsafe(8);
            h.writeUInt32BE(4 + topicBuf.length + payload.length, 0);
            h.writeUInt32BE(topicBuf.length, 4);
            s.write(h);
            s.write(topicBuf);
            s.write(payload);
          }
          s.uncork();
          if (sent < N) {
            if (s.writableLength > 8 * 1024 * 1024) s.once('drain', send);
            else setImmediate(send);
          }
        };
        send();
      });
    }
  }
}
