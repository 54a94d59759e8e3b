'use strict';

// Unit tests of lib/uploads/buffer_pool.js: the pool and the ownership registry,
// without a server.

const assert = require('node:assert/strict');
const {
  createBufferPool, releaseBuffer, BufferPool, POISON_BYTE,
  retainChunk, releaseHold, isPoolAllocator, onBufferAvailable, offBufferAvailable,
} = require('../../lib/uploads/buffer_pool');

const tick = () => new Promise((resolve) => setImmediate(resolve));
const code = (c) => (err) => { assert.equal(err.code, c); return true; };

// Sluice's side of the protocol: cut `n` chunks from an allocation and retain
// each, as the server does before emitting them.
function cut(buf, n, len = 16) {
  const chunks = [];
  for (let i = 0; i < n; i++) {
    const chunk = buf.subarray(i * len, (i + 1) * len);
    assert.equal(retainChunk(chunk), true);
    chunks.push(chunk);
  }
  return chunks;
}

describe('buffer pool', () => {
  describe('options', () => {
    it('has the documented defaults', () => {
      const pool = createBufferPool();
      assert.deepEqual(pool.stats(), { bufferSize: 65536, maxBuffers: 1024, allocated: 0, inUse: 0, dryWaits: 0, outstanding: 0, reclaimed: 0 });
      assert.deepEqual(createBufferPool({}).stats(), pool.stats());
      assert.deepEqual(createBufferPool(undefined).stats(), pool.stats());
      assert.ok(pool instanceof BufferPool);
      assert.equal(typeof pool.alloc, 'function');
      assert.equal(typeof pool.release, 'function');
      assert.equal(typeof pool.stats, 'function');
    });

    it('accepts explicit values', () => {
      const pool = createBufferPool({ bufferSize: 1, maxBuffers: 7, poison: true });
      assert.deepEqual(pool.stats(), { bufferSize: 1, maxBuffers: 7, allocated: 0, inUse: 0, dryWaits: 0, outstanding: 0, reclaimed: 0 });
      assert.equal(pool.alloc(1).length, 1);
    });

    it('rejects options of the wrong type with ERR_INVALID_ARG_TYPE', () => {
      for (const bad of [null, 5, 'x', true, [], () => {}]) {
        assert.throws(() => createBufferPool(bad), (err) => {
          assert.ok(err instanceof TypeError);
          assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
          assert.match(err.message, /"options" argument/);
          return true;
        });
      }
      for (const name of ['bufferSize', 'maxBuffers']) {
        for (const bad of ['1', null, 1n, {}, [1], true]) {
          assert.throws(() => createBufferPool({ [name]: bad }), (err) => {
            assert.ok(err instanceof TypeError);
            assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
            assert.match(err.message, new RegExp(`"options\\.${name}" property must be of type number`));
            return true;
          }, `${name}: ${String(bad)}`);
        }
      }
      for (const bad of [1, 'yes', null, {}]) {
        assert.throws(() => createBufferPool({ poison: bad }), (err) => {
          assert.ok(err instanceof TypeError);
          assert.equal(err.code, 'ERR_INVALID_ARG_TYPE');
          assert.match(err.message, /"options\.poison"/);
          return true;
        });
      }
    });

    it('rejects values that are not positive integers with ERR_OUT_OF_RANGE', () => {
      for (const name of ['bufferSize', 'maxBuffers']) {
        for (const bad of [0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 60]) {
          assert.throws(() => createBufferPool({ [name]: bad }), (err) => {
            assert.ok(err instanceof RangeError);
            assert.equal(err.code, 'ERR_OUT_OF_RANGE');
            assert.match(err.message, new RegExp(`"options\\.${name}" is out of range`));
            return true;
          }, `${name}: ${bad}`);
        }
      }
    });
  });

  describe('alloc', () => {
    it('returns bufferSize bytes whatever the size hint, each its own ArrayBuffer', () => {
      const pool = createBufferPool({ bufferSize: 4096, maxBuffers: 8 });
      const seen = new Set();
      for (const hint of [1, 4096, 65536, 1 << 20, undefined]) {
        const buf = pool.alloc(hint);
        assert.ok(Buffer.isBuffer(buf));
        assert.equal(buf.length, 4096);
        assert.equal(buf.byteOffset, 0);
        assert.equal(buf.buffer.byteLength, 4096, 'not a slice of a shared slab');
        assert.ok(!seen.has(buf.buffer));
        seen.add(buf.buffer);
      }
      assert.deepEqual(pool.stats(), { bufferSize: 4096, maxBuffers: 8, allocated: 5, inUse: 5, dryWaits: 0, outstanding: 0, reclaimed: 0 });
    });

    it('returns undefined when dry, and allocated never exceeds maxBuffers', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 3 });
      const bufs = [pool.alloc(64), pool.alloc(64), pool.alloc(64)];
      assert.ok(bufs.every(Buffer.isBuffer));
      for (let i = 0; i < 10; i++) assert.equal(pool.alloc(64), undefined);
      assert.deepEqual(pool.stats(), { bufferSize: 64, maxBuffers: 3, allocated: 3, inUse: 3, dryWaits: 1, outstanding: 0, reclaimed: 0 });
      pool.release(bufs[1]);
      assert.equal(pool.stats().inUse, 2);
      const again = pool.alloc(64);
      assert.equal(again.buffer, bufs[1].buffer, 'reused, not created');
      assert.equal(pool.alloc(64), undefined);
      assert.deepEqual(pool.stats(), { bufferSize: 64, maxBuffers: 3, allocated: 3, inUse: 3, dryWaits: 2, outstanding: 0, reclaimed: 0 });
    });

    it('reuses free buffers LIFO before creating new ones', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 10 });
      const [a, b, c] = [pool.alloc(), pool.alloc(), pool.alloc()];
      pool.release(a);
      pool.release(c);
      pool.release(b);
      assert.equal(pool.alloc().buffer, b.buffer);
      assert.equal(pool.alloc().buffer, c.buffer);
      assert.equal(pool.alloc().buffer, a.buffer);
      assert.equal(pool.stats().allocated, 3);
      const d = pool.alloc();
      assert.ok(![a, b, c].some((x) => x.buffer === d.buffer));
      assert.equal(pool.stats().allocated, 4);
    });

    it('hands out a new Buffer object per allocation over the reused memory', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      const first = pool.alloc();
      first.fill(7);
      pool.release(first);
      const second = pool.alloc();
      assert.notEqual(second, first);
      assert.equal(second.buffer, first.buffer);
      assert.equal(second[0], 7, 'no poison by default');
    });

    it('works detached from the pool (bound alloc, release, stats)', () => {
      const pool = createBufferPool({ bufferSize: 32, maxBuffers: 2 });
      const { alloc, release, stats } = pool;
      const a = alloc(32);
      const b = alloc.call(null, 32);
      assert.equal(a.length, 32);
      assert.equal(b.length, 32);
      assert.equal(alloc(32), undefined);
      assert.equal(stats().inUse, 2);
      release(a);
      release.call(undefined, b);
      assert.deepEqual(stats(), { bufferSize: 32, maxBuffers: 2, allocated: 2, inUse: 0, dryWaits: 1, outstanding: 0, reclaimed: 0 });
      const asAllocator = [1, 2].map(alloc);  // as a callback, extra args ignored
      assert.ok(asAllocator.every(Buffer.isBuffer));
    });
  });

  describe('references', () => {
    it('counts chunks outstanding; a chunk collected unreleased is reclaimed and counted', async () => {
      require('node:v8').setFlagsFromString('--expose-gc');
      const gc = require('node:vm').runInNewContext('gc');
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      let hold = pool.alloc();
      const kept = hold.subarray(0, 8);
      retainChunk(kept);
      (() => { retainChunk(hold.subarray(8, 16)); })();  // dropped at once
      assert.equal(pool.stats().outstanding, 2);
      releaseHold(hold);
      hold = null;
      releaseBuffer(kept);
      assert.equal(pool.stats().outstanding, 1);
      assert.equal(pool.stats().inUse, 1, 'the dropped chunk still holds the buffer');
      for (let i = 0; i < 20 && pool.stats().inUse !== 0; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.deepEqual(pool.stats(), { bufferSize: 64, maxBuffers: 1, allocated: 1, inUse: 0, dryWaits: 0, outstanding: 0, reclaimed: 1 });
    });

    it('returns a buffer only after the hold and every chunk are released', () => {
      const pool = createBufferPool({ bufferSize: 256, maxBuffers: 4 });
      const buf = pool.alloc(256);
      const chunks = cut(buf, 3);
      assert.equal(pool.stats().inUse, 1);
      assert.equal(releaseHold(buf), true);  // sluice stops reading into it
      assert.equal(pool.stats().inUse, 1);
      releaseBuffer(chunks[1]);
      pool.release(chunks[0]);
      assert.equal(pool.stats().inUse, 1);
      releaseBuffer(chunks[2]);
      assert.deepEqual(pool.stats(), { bufferSize: 256, maxBuffers: 4, allocated: 1, inUse: 0, dryWaits: 0, outstanding: 0, reclaimed: 0 });
      assert.equal(pool.alloc().buffer, buf.buffer);
    });

    it('counts the hold too when chunks are released before it', () => {
      const pool = createBufferPool({ bufferSize: 256, maxBuffers: 4 });
      const buf = pool.alloc();
      const [c1, c2] = cut(buf, 2);
      releaseBuffer(c1);
      releaseBuffer(c2);
      assert.equal(pool.stats().inUse, 1, 'sluice still reads into it');
      const c3 = cut(buf, 1)[0];  // more data arrived into the same buffer
      releaseHold(buf);
      assert.equal(pool.stats().inUse, 1);
      releaseBuffer(c3);
      assert.equal(pool.stats().inUse, 0);
    });

    it('gives back memory sluice took and never handed out (aborted client)', () => {
      const pool = createBufferPool({ bufferSize: 256, maxBuffers: 4 });
      const buf = pool.alloc();
      const [delivered, queued] = cut(buf, 2);
      // Client aborts: sluice drops its hold and the chunk it never emitted.
      assert.equal(releaseHold(buf), true);
      assert.equal(releaseHold(queued), true);
      assert.equal(pool.stats().inUse, 1);
      releaseBuffer(delivered);
      assert.equal(pool.stats().inUse, 0);
      // releaseHold never throws: a second call is a no-op.
      assert.equal(releaseHold(buf), false);
      assert.equal(releaseHold(queued), false);
      assert.equal(releaseHold(Buffer.alloc(4)), false);
      assert.equal(releaseHold(undefined), false);
      assert.equal(pool.stats().inUse, 0);
    });

    it('returns inUse to 0 after many buffers and chunks', () => {
      const pool = createBufferPool({ bufferSize: 1024, maxBuffers: 16 });
      const chunks = [];
      for (let i = 0; i < 16; i++) {
        const buf = pool.alloc();
        chunks.push(...cut(buf, 1 + (i % 5), 64));
        releaseHold(buf);
      }
      assert.equal(pool.alloc(), undefined);
      assert.equal(pool.stats().inUse, 16);
      for (const chunk of chunks.reverse()) releaseBuffer(chunk);
      assert.deepEqual(pool.stats(), { bufferSize: 1024, maxBuffers: 16, allocated: 16, inUse: 0, dryWaits: 1, outstanding: 0, reclaimed: 0 });
    });

    it('releases the alloc result itself for users who call alloc directly', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const a = pool.alloc();
      const b = pool.alloc();
      pool.release(a);
      releaseBuffer(b);  // the module function finds the pool as well
      assert.equal(pool.stats().inUse, 0);
      assert.throws(() => pool.release(a), code('ERR_SLUICE_BUFFER_RELEASED'));
      assert.throws(() => releaseBuffer(b), code('ERR_SLUICE_BUFFER_RELEASED'));
    });

    it('throws ERR_SLUICE_BUFFER_RELEASED on a double release of a chunk', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const buf = pool.alloc();
      const [c1, c2] = cut(buf, 2);
      releaseBuffer(c1);
      assert.throws(() => releaseBuffer(c1), (err) => {
        assert.ok(err instanceof Error);
        assert.equal(err.code, 'ERR_SLUICE_BUFFER_RELEASED');
        return true;
      });
      assert.throws(() => pool.release(c1), code('ERR_SLUICE_BUFFER_RELEASED'));
      assert.equal(pool.stats().inUse, 1, 'the failed releases changed nothing');
      releaseHold(buf);
      releaseBuffer(c2);
      assert.equal(pool.stats().inUse, 0);
      assert.throws(() => releaseBuffer(c2), code('ERR_SLUICE_BUFFER_RELEASED'));
    });

    it('detects a stale release after the memory was reused, without harming the new owner', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      const first = pool.alloc();
      const [oldChunk] = cut(first, 1);
      releaseHold(first);
      releaseBuffer(oldChunk);
      const second = pool.alloc();
      assert.equal(second.buffer, first.buffer);
      const [newChunk] = cut(second, 1);
      assert.throws(() => releaseBuffer(oldChunk), code('ERR_SLUICE_BUFFER_RELEASED'));
      assert.throws(() => pool.release(first), code('ERR_SLUICE_BUFFER_RELEASED'));
      assert.equal(releaseHold(first), false);
      assert.equal(pool.stats().inUse, 1);
      releaseHold(second);
      assert.equal(pool.stats().inUse, 1, 'newChunk still holds it');
      releaseBuffer(newChunk);
      assert.equal(pool.stats().inUse, 0);
    });

    it('ignores memory no pool owns, in pool.release and releaseBuffer', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const buf = pool.alloc();
      const others = [
        Buffer.alloc(64), Buffer.allocUnsafe(8), Buffer.allocUnsafeSlow(64), Buffer.from('abc'),
        new Uint8Array(64), new DataView(new ArrayBuffer(8)), new ArrayBuffer(8),
        'a string chunk', undefined, null, 0, 42, {}, { buffer: {} }, [], Symbol('x'), () => {},
      ];
      for (const other of others) {
        assert.doesNotThrow(() => pool.release(other));
        assert.doesNotThrow(() => releaseBuffer(other));
        assert.doesNotThrow(() => releaseBuffer(other), 'twice is fine too');
      }
      assert.deepEqual(pool.stats(), { bufferSize: 64, maxBuffers: 2, allocated: 1, inUse: 1, dryWaits: 0, outstanding: 0, reclaimed: 0 });
      assert.equal(retainChunk(Buffer.alloc(4)), false);
      assert.equal(retainChunk(new Uint8Array(4)), false);
      pool.release(buf);
      assert.equal(pool.stats().inUse, 0);
    });

    it('treats releasing a view that was never retained as misuse (ERR_SLUICE_INVALID_CHUNK)', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const buf = pool.alloc();
      const [chunk] = cut(buf, 1);
      const misuses = [
        chunk.subarray(1),                 // a slice of a chunk
        buf.subarray(0, 8),                // a slice never retained
        Buffer.from(chunk.buffer),         // another Buffer over the same memory
        new Uint8Array(buf.buffer, 4, 4),  // a typed array over it
      ];
      for (const view of misuses) {
        assert.throws(() => releaseBuffer(view), (err) => {
          assert.ok(err instanceof TypeError);
          assert.equal(err.code, 'ERR_SLUICE_INVALID_CHUNK');
          return true;
        });
        assert.throws(() => pool.release(view), code('ERR_SLUICE_INVALID_CHUNK'));
      }
      assert.equal(pool.stats().inUse, 1);
      releaseBuffer(chunk);
      releaseHold(buf);
      assert.equal(pool.stats().inUse, 0);
      // Still misuse while the memory sits in the free list.
      assert.throws(() => releaseBuffer(buf.subarray(2)), code('ERR_SLUICE_INVALID_CHUNK'));
      assert.equal(pool.stats().inUse, 0);
    });

    it('releases a chunk to the pool that owns it, whichever pool.release is called', () => {
      const a = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const b = createBufferPool({ bufferSize: 128, maxBuffers: 2 });
      const buf = b.alloc();
      const [chunk] = cut(buf, 1);
      releaseHold(buf);
      a.release(chunk);
      assert.equal(b.stats().inUse, 0);
      assert.equal(a.stats().inUse, 0);
      assert.equal(a.stats().allocated, 0);
    });

    it('rejects retain misuse by sluice', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const buf = pool.alloc();
      const [chunk] = cut(buf, 1);
      assert.throws(() => retainChunk(chunk), code('ERR_SLUICE_INVALID_CHUNK'), 'twice');
      assert.throws(() => retainChunk(buf), code('ERR_SLUICE_INVALID_CHUNK'), 'the alloc result');
      releaseBuffer(chunk);
      assert.throws(() => retainChunk(chunk), code('ERR_SLUICE_INVALID_CHUNK'), 'released');
      releaseHold(buf);
      assert.throws(() => retainChunk(buf.subarray(0, 4)), code('ERR_SLUICE_BUFFER_RELEASED'),
                    'memory back in the pool');
      assert.equal(pool.stats().inUse, 0);
    });

    it('leaves no visible trace on chunks and buffers', () => {
      const pool = createBufferPool({ bufferSize: 8, maxBuffers: 1 });
      const buf = pool.alloc();
      buf.fill(0);
      const [chunk] = cut(buf, 1, 4);
      for (const view of [buf, chunk]) {
        assert.deepEqual(Reflect.ownKeys(view), Reflect.ownKeys(Buffer.alloc(view.length)));
        assert.equal(require('node:util').inspect(view), require('node:util').inspect(Buffer.alloc(view.length)));
      }
      assert.deepEqual(Reflect.ownKeys(buf.buffer), []);
      releaseHold(buf);
      releaseBuffer(chunk);
    });

    it('rejects retaining something that is not a view', () => {
      for (const bad of [undefined, null, 'abc', new ArrayBuffer(4), {}]) {
        assert.throws(() => retainChunk(bad), code('ERR_INVALID_ARG_TYPE'));
      }
    });

    it('accepts natively made views (a Uint8Array over the same ArrayBuffer) as chunks', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      const buf = pool.alloc();
      const chunk = new Uint8Array(buf.buffer, 10, 20);
      assert.equal(retainChunk(chunk), true);
      releaseHold(buf);
      assert.equal(pool.stats().inUse, 1);
      releaseBuffer(chunk);
      assert.equal(pool.stats().inUse, 0);
    });

    it('keeps the accounting exact under a random workload', () => {
      let seed = 12345;
      const rand = (n) => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed % n;
      };
      const pool = createBufferPool({ bufferSize: 128, maxBuffers: 8, poison: true });
      const live = new Map();  // ArrayBuffer -> { hold, chunks: [] }
      const handed = [];       // chunks the "user" holds
      for (let step = 0; step < 20000; step++) {
        const op = rand(4);
        if (op === 0) {
          const buf = pool.alloc(128);
          if (buf === undefined) {
            assert.equal(live.size, 8);
          } else {
            assert.ok(!live.has(buf.buffer));
            assert.ok(buf.every((x) => x === POISON_BYTE), 'free memory is poisoned');
            live.set(buf.buffer, { hold: buf, chunks: 0 });
          }
        } else if (op === 1 && live.size > 0) {
          const entries = [...live.values()].filter((e) => e.hold);
          if (entries.length > 0) {
            const e = entries[rand(entries.length)];
            const chunk = e.hold.subarray(rand(64), 64 + rand(64));
            chunk.fill(1);
            retainChunk(chunk);
            e.chunks++;
            handed.push(chunk);
          }
        } else if (op === 2) {
          const entries = [...live.values()].filter((e) => e.hold);
          if (entries.length > 0) {
            const e = entries[rand(entries.length)];
            assert.equal(releaseHold(e.hold), true);
            e.hold = null;
          }
        } else if (op === 3 && handed.length > 0) {
          const i = rand(handed.length);
          const chunk = handed[i];
          handed[i] = handed[handed.length - 1];
          handed.pop();
          releaseBuffer(chunk);
          live.get(chunk.buffer).chunks--;
        }
        for (const [ab, e] of live) {
          if (!e.hold && e.chunks === 0) live.delete(ab);
        }
        const s = pool.stats();
        assert.equal(s.inUse, live.size);
        assert.ok(s.allocated <= 8);
      }
    });
  });

  describe('poison', () => {
    it('fills memory with 0xDB when it goes back to the free list', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2, poison: true });
      assert.equal(POISON_BYTE, 0xdb);
      const buf = pool.alloc();
      buf.fill(0x41);
      const [chunk] = cut(buf, 1);
      releaseHold(buf);
      assert.equal(chunk[0], 0x41, 'not poisoned while a chunk is out');
      releaseBuffer(chunk);
      assert.ok(chunk.every((x) => x === 0xdb), 'use after release reads poison');
      assert.ok(new Uint8Array(buf.buffer).every((x) => x === 0xdb));
    });

    it('does not touch memory without poison', () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const buf = pool.alloc();
      buf.fill(0x41);
      pool.release(buf);
      assert.ok(buf.every((x) => x === 0x41));
    });
  });

  describe('availability signal', () => {
    it('fires once, asynchronously, when a dry pool gets a buffer back', async () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 2 });
      const calls = [];
      const listener = (p) => calls.push(p);
      onBufferAvailable(pool.alloc, listener);
      const a = pool.alloc();
      const b = pool.alloc();
      assert.equal(pool.alloc(), undefined);  // dry
      pool.release(a);
      pool.release(b);                        // same transition: no second signal
      assert.equal(calls.length, 0, 'not synchronous');
      await tick();
      assert.deepEqual(calls, [pool]);
      // Not dry since: releases signal nothing.
      const c = pool.alloc();
      pool.release(c);
      await tick();
      assert.equal(calls.length, 1);
      assert.equal(offBufferAvailable(pool.alloc, listener), true);
    });

    it('coalesces transitions that happen before the notification runs', async () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      let calls = 0;
      onBufferAvailable(pool.alloc, () => { calls++; });
      const a = pool.alloc();
      assert.equal(pool.alloc(), undefined);
      pool.release(a);                       // signal scheduled
      const b = pool.alloc();
      assert.equal(pool.alloc(), undefined);  // dry again before it ran
      pool.release(b);                       // covered by the pending signal
      await tick();
      assert.equal(calls, 1);
    });

    it('fires again on every new dry -> available transition', async () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      let calls = 0;
      const listener = () => { calls++; };
      onBufferAvailable(pool, listener);  // by pool object as well as alloc
      for (let round = 1; round <= 3; round++) {
        const buf = pool.alloc();
        assert.equal(pool.alloc(), undefined);
        const [chunk] = cut(buf, 1);
        releaseHold(buf);
        await tick();
        assert.equal(calls, round - 1, 'a chunk still holds the buffer');
        releaseBuffer(chunk);
        await tick();
        assert.equal(calls, round);
      }
      offBufferAvailable(pool, listener);
    });

    it('lets a listener resume stalled work, and signals again if it runs dry again', async () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      const stalled = ['conn1', 'conn2'];
      const got = [];
      onBufferAvailable(pool.alloc, () => {
        while (stalled.length > 0) {
          const buf = pool.alloc(64);
          if (buf === undefined) return;  // dry again: wait for the next signal
          got.push([stalled.shift(), buf]);
        }
      });
      const first = pool.alloc();
      assert.equal(pool.alloc(), undefined);
      pool.release(first);
      await tick();
      assert.deepEqual(got.map((g) => g[0]), ['conn1']);
      pool.release(got[0][1]);
      await tick();
      assert.deepEqual(got.map((g) => g[0]), ['conn1', 'conn2']);
    });

    it('can remove listeners, also from inside a notification', async () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      const calls = [];
      const second = () => calls.push('second');
      const first = () => { calls.push('first'); offBufferAvailable(pool.alloc, second); };
      const removed = () => calls.push('removed');
      onBufferAvailable(pool.alloc, first);
      onBufferAvailable(pool.alloc, first);  // registered once
      onBufferAvailable(pool.alloc, second);
      onBufferAvailable(pool.alloc, removed);
      assert.equal(offBufferAvailable(pool.alloc, removed), true);
      assert.equal(offBufferAvailable(pool.alloc, removed), false);
      const buf = pool.alloc();
      pool.alloc();
      pool.release(buf);
      await tick();
      assert.deepEqual(calls, ['first']);
      offBufferAvailable(pool, first);
      const again = pool.alloc();
      pool.alloc();
      pool.release(again);
      await tick();
      assert.deepEqual(calls, ['first']);
    });

    it('does not signal a pool that never ran dry', async () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 4 });
      let calls = 0;
      onBufferAvailable(pool.alloc, () => { calls++; });
      for (let i = 0; i < 10; i++) pool.release(pool.alloc());
      await tick();
      assert.equal(calls, 0);
    });

    it('calls the other listeners when one throws, and surfaces the error', async () => {
      const pool = createBufferPool({ bufferSize: 64, maxBuffers: 1 });
      const boom = new Error('boom');
      let called = false;
      onBufferAvailable(pool.alloc, () => { throw boom; });
      onBufferAvailable(pool.alloc, () => { called = true; });
      const saved = process.listeners('uncaughtException');
      process.removeAllListeners('uncaughtException');
      let caught;
      process.once('uncaughtException', (err) => { caught = err; });
      try {
        const buf = pool.alloc();
        pool.alloc();
        pool.release(buf);
        await tick();
        await tick();
      } finally {
        process.removeAllListeners('uncaughtException');
        for (const l of saved) process.on('uncaughtException', l);
      }
      assert.equal(called, true);
      assert.equal(caught, boom);
    });

    it('validates its arguments', () => {
      const pool = createBufferPool();
      assert.throws(() => onBufferAvailable(() => {}, () => {}), code('ERR_INVALID_ARG_TYPE'));
      assert.throws(() => onBufferAvailable(pool.release, () => {}), code('ERR_INVALID_ARG_TYPE'));
      assert.throws(() => onBufferAvailable(undefined, () => {}), code('ERR_INVALID_ARG_TYPE'));
      assert.throws(() => onBufferAvailable(pool, 'nope'), code('ERR_INVALID_ARG_TYPE'));
      assert.throws(() => offBufferAvailable({}, () => {}), code('ERR_INVALID_ARG_TYPE'));
    });
  });

  describe('isPoolAllocator', () => {
    it('recognises exactly the bound alloc of a pool', () => {
      const pool = createBufferPool();
      assert.equal(isPoolAllocator(pool.alloc), true);
      const { alloc } = createBufferPool();
      assert.equal(isPoolAllocator(alloc), true);
      assert.equal(isPoolAllocator((size) => pool.alloc(size)), false, 'a wrapper is a custom allocator');
      assert.equal(isPoolAllocator(pool.alloc.bind(null)), false);
      assert.equal(isPoolAllocator(pool), false);
      assert.equal(isPoolAllocator(pool.release), false);
      assert.equal(isPoolAllocator(Buffer.allocUnsafe), false);
      assert.equal(isPoolAllocator(undefined), false);
      assert.equal(isPoolAllocator('alloc'), false);
    });
  });
});
