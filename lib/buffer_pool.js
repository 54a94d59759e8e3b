'use strict';

// lib/buffer_pool.js — the bounded pool of request-body read buffers, and the
// registry that says who owns which bytes (issue 3: zero-copy uploads).
//
// ─── Public API (re-exported by lib/index.js) ───────────────────────────────
//
// createBufferPool({ bufferSize = 65536, maxBuffers = 1024, poison = false } = {})
//     → pool { alloc(size), release(chunk), stats() }
//   All three are own properties bound to the pool: `pool.alloc` can be handed
//   over bare (`createServer({ requestBufferAllocator: pool.alloc })`).
//   Options must be positive integers (bufferSize ≤ buffer.constants.MAX_LENGTH,
//   maxBuffers ≤ Number.MAX_SAFE_INTEGER) and a boolean; otherwise a TypeError
//   with code ERR_INVALID_ARG_TYPE (wrong type) or a RangeError with code
//   ERR_OUT_OF_RANGE (wrong value) is thrown, as Node does.
//
// pool.alloc(size) → Buffer | undefined
//   `size` is only a hint (the read size sluice would like) and is not
//   validated: the result is always exactly `bufferSize` bytes, also when
//   size > bufferSize (the caller reads at most buf.length bytes into it).
//   Every pool buffer is its own ArrayBuffer (Buffer.allocUnsafeSlow, never
//   Node's shared slab) of exactly bufferSize bytes at offset 0, so
//   `chunk.buffer` identifies the pool buffer a chunk was cut from. Free
//   buffers are reused first, most recently freed first (LIFO: cache-warm); a
//   new one is created only while allocated < maxBuffers; otherwise the pool
//   is dry and alloc returns `undefined`.
//   Each call returns a NEW Buffer object (a full-length view of the reused
//   memory). That object stands for this allocation's single initial
//   reference, the "hold": a stale release of an earlier allocation's object
//   is detected (ERR_SLUICE_BUFFER_RELEASED) instead of dropping the hold of
//   whoever has the memory now. Identity of the memory is `buf.buffer`.
//   Buffers are never given back to the GC: memory is bounded by
//   bufferSize * maxBuffers for the life of the pool.
//
// pool.release(chunk) / releaseBuffer(chunk) → undefined   (the same function)
//   Gives back one reference: a body chunk sluice handed out, or the Buffer
//   pool.alloc returned (for users who call alloc themselves:
//   `const b = pool.alloc(); …; pool.release(b)` returns it to the pool).
//   The reference goes to whichever pool owns the memory (found from the
//   view's ArrayBuffer through a module-wide registry: a module-private field
//   stamped on each pool ArrayBuffer, which behaves like a WeakMap keyed by
//   ArrayBuffer but is ~10x cheaper); pool.release on another pool's chunk
//   releases it to that pool. When the last reference of a buffer is
//   gone it goes back on its pool's free list and `inUse` drops by one.
//   - Releasing the same chunk (or the same alloc result) a second time throws
//     an Error with code ERR_SLUICE_BUFFER_RELEASED, also after its memory has
//     been reused.
//   - Anything no pool owns is ignored without a throw: Buffers of other
//     memory (copy-fallback chunks, Buffer.alloc, slab Buffers), strings (a
//     request with setEncoding), undefined, null, numbers, plain objects.
//   - Misuse: a view of pool memory that was neither handed out as a chunk nor
//     returned by alloc — e.g. `chunk.subarray(1)` or
//     `Buffer.from(chunk.buffer)` — holds no reference. Releasing it throws a
//     TypeError with code ERR_SLUICE_INVALID_CHUNK (it would otherwise leak
//     the real chunk silently and dry the pool). Release the chunk object you
//     were given, once.
//   - After the release, the memory belongs to the pool: reading it or
//     writing it is a bug (with `poison: true` it reads as 0xDB).
//
// pool.stats() → { bufferSize, maxBuffers, allocated, inUse, outstanding, reclaimed }
//   allocated: buffers created so far (never > maxBuffers, never decreases);
//   inUse: buffers handed out by alloc and not yet back on the free list;
//   outstanding: body chunks sluice handed out that hold a reference (not
//   yet released); reclaimed: chunks whose reference was dropped because
//   the chunk object was garbage-collected unreleased (FinalizationRegistry).
//
// Safety nets for code that never releases (docs/uploads.md): a chunk
//   collected unreleased gives its reference back (counted in reclaimed);
//   a pool dry for 500 ms while chunks are outstanding emits one process
//   warning, code SLUICE_POOL_DRY, per dry spell.
//
// poison: true fills a buffer with 0xDB (POISON_BYTE) each time it goes back
//   to the free list (and when it is created), so use-after-release shows up.
//
// ─── Server-internal API (lib/ only; not re-exported to users) ──────────────
//
// Reference protocol. A buffer returned by alloc starts with ONE reference,
// sluice's hold, carried by the returned Buffer object itself.
//   retainChunk(chunk) → boolean
//     +1 for a body chunk sluice is about to hand to the user: a NEW view
//     object over the buffer's memory (`buf.subarray(a, b)`, or a
//     Buffer/Uint8Array made natively over the same ArrayBuffer). Call it once
//     per chunk object, while the buffer still has a reference (i.e. before
//     releasing the hold). Returns false (and does nothing) when the memory
//     belongs to no pool (e.g. a custom allocator's Buffer), true otherwise.
//     Throws (sluice bugs): ERR_INVALID_ARG_TYPE when chunk is not an
//     ArrayBuffer view; ERR_SLUICE_INVALID_CHUNK when that view object
//     already holds or held a reference (retained twice, the alloc result
//     itself, a released chunk); ERR_SLUICE_BUFFER_RELEASED when the buffer is
//     already back in its pool.
//   releaseHold(view) → boolean
//     -1 for sluice itself, never throws: drops the hold (pass the Buffer the
//     allocator returned, when sluice stops reading into it, including on
//     abort), or releases a retained chunk that was never delivered to the
//     user (e.g. still queued when the request was destroyed). Returns true if
//     a reference was dropped, false if `view` carries none (memory of no
//     pool, or already released). Unlike releaseBuffer it does not throw on a
//     second release, so cleanup paths stay safe.
//   The user's releaseBuffer(chunk)/pool.release(chunk) is the other -1.
//   A buffer is free again when the hold and every retained chunk are released,
//   in any order. Sluice must hand out only views it retained, never the alloc
//   result itself (always subarray it, even for a whole-buffer chunk).
//
// isPoolAllocator(fn) → boolean
//   true iff fn is some pool's bound `alloc`. For such an allocator an
//   `undefined` return means "dry": stop reading the socket (TCP
//   backpressure) and wait for onBufferAvailable. For any other allocator a
//   non-Buffer (or zero-length) return means "fall back to copying".
//
// onBufferAvailable(poolOrAlloc, listener) / offBufferAvailable(poolOrAlloc, listener)
//   Register / remove (→ boolean: was registered) a listener on a pool, named
//   by the pool object or its bound alloc. A listener is registered at most
//   once (a Set; registering again is a no-op). Signal: exactly once per
//   dry → not-dry transition: after alloc has returned undefined, the next
//   buffer that goes back on the free list schedules ONE notification
//   (queueMicrotask); releases before it runs, and releases while the pool
//   never went dry again, schedule nothing. The notification calls every
//   listener registered at that moment as listener(pool); listeners should
//   retry alloc for the connections they stalled — those that get undefined
//   again make the pool dry again, so the next release signals again (no
//   lost wake-up as long as a stalled connection's alloc failed before it
//   waits). A listener that throws does not stop the others; its error is
//   rethrown on process.nextTick (an uncaughtException). The pool holds its
//   listeners strongly: remove them when the server closes.
//
// POISON_BYTE = 0xdb.
//
// Cost: ownership lives in private fields stamped on the ArrayBuffer (once,
// at creation) and on each view carrying a reference (see Stamp below), not in
// WeakMaps: retainChunk is two brand checks, a load and a store; a release is
// a brand check, a load and a store, plus a free-list push when the last
// reference goes. No closures, no allocation per chunk; everything is O(1).
// (Measured: ~30 ns per chunk on top of the subarray sluice makes anyway;
// WeakMap entries cost ~400 ns.) The reclaim of chunks collected unreleased
// costs one FinalizationRegistry registration per hold that chunks were cut
// under (a Lease), not per chunk: a registration costs about 5x a subarray
// (measured 2.1 µs vs 0.35 µs on a loaded 2-vCPU VM), so once per read
// rather than once per chunk.

const { constants: { MAX_LENGTH } } = require('buffer');
const { inspect } = require('util');
const { codedError, codedTypeError, codedRangeError } = require('./errors');

const POISON_BYTE = 0xdb;

// Ownership is recorded with private-field "stamps": a base class whose
// constructor returns its argument lets a subclass add a private field to an
// object that already exists. Such a field is invisible to user code
// (util.inspect, Reflect.ownKeys, JSON), costs one property store to add and a
// brand check (`#f in o`) plus a load to read — about 10x cheaper per chunk
// than a WeakMap entry — and dies with the object like a WeakMap entry would.
class Stamp {
  constructor(target) {
    return target;
  }
}

// Stamped on the ArrayBuffer of every buffer any pool created: its Slot.
// Module-wide, so releaseBuffer finds the owning pool from any view.
class MemoryStamp extends Stamp {
  #slot;
  constructor(arrayBuffer, slot) {
    super(arrayBuffer);
    this.#slot = slot;
  }

  // `memory` must be an object (a view's .buffer is).
  static slotOf(memory) {
    return #slot in memory ? memory.#slot : undefined;
  }
}

// Stamped on each view object that carries a reference: the alloc result's
// hold carries its Slot, a retained chunk the Lease it was cut under (see
// below); null once it was released.
class RefStamp extends Stamp {
  #ref;
  constructor(view, ref) {
    super(view);
    this.#ref = ref;
  }

  static isStamped(view) {
    return #ref in view;
  }

  // → Slot (reference taken away from the view), null (already released) or
  // undefined (never carried one; also for anything not an object).
  static take(view) {
    if (typeof view !== 'object' || view === null || !(#ref in view)) return undefined;
    const ref = view.#ref;
    if (ref === null) return null;
    view.#ref = null;
    if (ref instanceof Lease) {
      // A chunk: no longer outstanding.
      ref.count.unreleased--;
      ref.count.slot.state.outstanding--;
      return ref.count.slot;
    }
    // The hold: no new chunk is cut under this lease any more.
    ref.lease = null;
    return ref;
  }

  static holds(view) {
    return #ref in view && view.#ref !== null;
  }
}

// Reclaiming chunks collected unreleased, without a cost per chunk: every
// chunk cut from a buffer during one hold references that hold's Lease
// (through its stamp), and only the Lease is registered with the
// FinalizationRegistry, once per hold. The Slot references the Lease while
// the hold lasts; after that only chunks do. When the Lease is collected,
// every chunk cut under it is gone: those never released (count.unreleased)
// drop their references then. The held value (LeaseCount) must not
// reference the Lease.
class LeaseCount {
  constructor(slot) {
    this.slot = slot;
    this.unreleased = 0;
  }
}

class Lease {
  constructor(slot) {
    this.count = new LeaseCount(slot);
  }
}

// Pool object or bound alloc function → PoolState.
const poolStates = new WeakMap();

class Slot {
  constructor(state, mem) {
    this.state = state;  // owning PoolState
    this.mem = mem;      // pool-internal full view, never handed out
    this.refs = 0;       // 0 ⇔ on the free list (or being created)
    this.lease = null;   // the current hold's Lease (see Lease)
  }

  // The Lease chunks cut now are counted in (a new one if the hold is gone:
  // it then lives until the buffer goes back to the free list).
  currentLease() {
    if (this.lease === null) {
      this.lease = new Lease(this);
      reclaimer.register(this.lease, this.lease.count);
    }
    return this.lease;
  }
}

// A handler that drops its chunks without releasing them thus cannot keep
// the pool dry for ever, only until the next collection; counted.
const reclaimer = new FinalizationRegistry((count) => {
  const n = count.unreleased;
  if (n === 0) return;
  count.unreleased = 0;
  const slot = count.slot;
  const state = slot.state;
  state.reclaimed += n;
  state.outstanding -= n;
  slot.refs -= n;
  if (slot.refs === 0) state.reclaim(slot);
});

// A pool dry this long while chunks are outstanding warns (once per dry
// spell): the likely cause is chunks nobody releases.
const DRY_WARNING_MS = 500;

class PoolState {
  constructor(pool, bufferSize, maxBuffers, poison) {
    this.pool = pool;
    this.bufferSize = bufferSize;
    this.maxBuffers = maxBuffers;
    this.poison = poison;
    this.allocated = 0;
    this.inUse = 0;
    this.outstanding = 0;           // chunks handed out, not yet released
    this.reclaimed = 0;             // of those, reclaimed when collected
    this.dryTimer = null;           // armed while dry (DRY_WARNING_MS)
    this.dryWarned = false;
    this.free = [];                 // stack of Slots: LIFO reuse
    this.dry = false;               // alloc returned undefined since last signal
    this.notifyScheduled = false;
    this.listeners = new Set();
    this.notify = () => this.runListeners();  // one closure per pool
  }

  alloc() {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.allocated >= this.maxBuffers) {
        this.dry = true;
        if (this.dryTimer === null && !this.dryWarned) {
          this.dryTimer = setTimeout(warnDry, DRY_WARNING_MS, this);
          this.dryTimer.unref();
        }
        return undefined;
      }
      const mem = Buffer.allocUnsafeSlow(this.bufferSize);
      if (this.poison) mem.fill(POISON_BYTE);
      slot = new Slot(this, mem);
      new MemoryStamp(mem.buffer, slot);  // eslint-disable-line no-new
      this.allocated++;
    }
    slot.refs = 1;
    this.inUse++;
    slot.lease = null;  // created with the first chunk (currentLease)
    // A fresh object each time: it carries the hold.
    return new RefStamp(slot.mem.subarray(0), slot);
  }

  reclaim(slot) {
    slot.lease = null;
    if (this.poison) slot.mem.fill(POISON_BYTE);
    this.free.push(slot);
    this.inUse--;
    if (this.dryTimer !== null) {
      clearTimeout(this.dryTimer);
      this.dryTimer = null;
    }
    this.dryWarned = false;
    if (this.dry) {
      this.dry = false;
      if (!this.notifyScheduled) {
        this.notifyScheduled = true;
        queueMicrotask(this.notify);
      }
    }
  }

  runListeners() {
    this.notifyScheduled = false;
    const listeners = this.listeners;
    if (listeners.size === 0) return;
    for (const listener of Array.from(listeners)) {
      if (!listeners.has(listener)) continue;  // removed by an earlier one
      try {
        listener(this.pool);
      } catch (err) {
        process.nextTick(rethrow, err);
      }
    }
  }

  stats() {
    return {
      bufferSize: this.bufferSize,
      maxBuffers: this.maxBuffers,
      allocated: this.allocated,
      inUse: this.inUse,
      outstanding: this.outstanding,
      reclaimed: this.reclaimed,
    };
  }
}

function warnDry(state) {
  state.dryTimer = null;
  if (!state.dry || state.outstanding === 0) return;
  state.dryWarned = true;
  process.emitWarning(
    `sluice buffer pool dry for ${DRY_WARNING_MS} ms with ${state.outstanding} request body ` +
    `chunk(s) handed out and not released: uploads are stalled (TCP backpressure). ` +
    `Call sluice.releaseBuffer(chunk) once done with each 'data' chunk, or consume the ` +
    `body with req.pipe(writable), stream.pipeline() or for await, which release for you ` +
    `(see docs/uploads.md). Chunks dropped without release come back only when collected.`,
    { code: 'SLUICE_POOL_DRY' });
}

function rethrow(err) {
  throw err;
}

function dropRef(slot) {
  if (--slot.refs === 0) slot.state.reclaim(slot);
}

// ─── public ─────────────────────────────────────────────────────────────────

function releaseBuffer(chunk) {
  const slot = RefStamp.take(chunk);
  if (slot) {
    dropRef(slot);
    return;
  }
  if (slot === null) {
    throw codedError('ERR_SLUICE_BUFFER_RELEASED',
                     'This chunk was already released to its buffer pool');
  }
  if (ArrayBuffer.isView(chunk) && MemoryStamp.slotOf(chunk.buffer) !== undefined) {
    throw codedTypeError('ERR_SLUICE_INVALID_CHUNK',
                         'This view of pool memory is not a chunk sluice handed out ' +
                         '(nor a buffer pool.alloc returned): release the chunk ' +
                         'object itself, not a slice or copy of it');
  }
  // Memory no pool owns: ignored.
}

class BufferPool {
  constructor(options) {
    if (options === undefined) options = {};
    else validateObject(options, 'options');
    const bufferSize = options.bufferSize === undefined ? 65536 : options.bufferSize;
    const maxBuffers = options.maxBuffers === undefined ? 1024 : options.maxBuffers;
    const poison = options.poison === undefined ? false : options.poison;
    validateInteger(bufferSize, 'options.bufferSize', 1, MAX_LENGTH);
    validateInteger(maxBuffers, 'options.maxBuffers', 1, Number.MAX_SAFE_INTEGER);
    if (typeof poison !== 'boolean') {
      throw invalidArgType('options.poison', 'boolean', poison);
    }

    const state = new PoolState(this, bufferSize, maxBuffers, poison);
    this.alloc = function alloc(size) { return state.alloc(); };
    this.release = function release(chunk) { releaseBuffer(chunk); };
    this.stats = function stats() { return state.stats(); };
    poolStates.set(this, state);
    poolStates.set(this.alloc, state);
  }
}

function createBufferPool(options) {
  return new BufferPool(options);
}

// ─── server-internal ────────────────────────────────────────────────────────

function retainChunk(chunk) {
  if (!ArrayBuffer.isView(chunk)) throw invalidArgType('chunk', 'a Buffer or TypedArray', chunk);
  const slot = MemoryStamp.slotOf(chunk.buffer);
  if (slot === undefined) return false;
  if (slot.refs === 0) {
    throw codedError('ERR_SLUICE_BUFFER_RELEASED',
                     'Cannot retain a chunk of a buffer that is back in its pool');
  }
  if (RefStamp.isStamped(chunk)) {
    throw codedTypeError('ERR_SLUICE_INVALID_CHUNK',
                         'This view already carries (or carried) a reference: ' +
                         'retain a new view object for every chunk');
  }
  const lease = slot.currentLease();
  new RefStamp(chunk, lease);  // eslint-disable-line no-new
  lease.count.unreleased++;
  slot.refs++;
  slot.state.outstanding++;
  return true;
}

// → true when `chunk` is a view carrying a pool reference (a chunk sluice
// handed out that nobody released yet).
function holdsReference(chunk) {
  return typeof chunk === 'object' && chunk !== null && RefStamp.holds(chunk);
}

function releaseHold(view) {
  const slot = RefStamp.take(view);
  if (!slot) return false;
  dropRef(slot);
  return true;
}

function isPoolAllocator(fn) {
  return typeof fn === 'function' && poolStates.has(fn);
}

function stateOf(poolOrAlloc) {
  const state = poolStates.get(poolOrAlloc);
  if (state === undefined) {
    throw invalidArgType('pool', 'a buffer pool or its alloc function', poolOrAlloc);
  }
  return state;
}

function onBufferAvailable(poolOrAlloc, listener) {
  const state = stateOf(poolOrAlloc);
  if (typeof listener !== 'function') {
    throw invalidArgType('listener', 'function', listener);
  }
  state.listeners.add(listener);
}

function offBufferAvailable(poolOrAlloc, listener) {
  return stateOf(poolOrAlloc).listeners.delete(listener);
}

// ─── validation, Node-style messages ────────────────────────────────────────

function describeReceived(value) {
  if (value == null) return ` Received ${value}`;
  if (typeof value === 'function') return ` Received function ${value.name || '<anonymous>'}`;
  if (typeof value === 'object') {
    if (value.constructor && value.constructor.name) {
      return ` Received an instance of ${value.constructor.name}`;
    }
    return ` Received ${inspect(value, { depth: -1 })}`;
  }
  let shown = inspect(value, { colors: false });
  if (shown.length > 28) shown = `${shown.slice(0, 25)}...`;
  return ` Received type ${typeof value} (${shown})`;
}

function invalidArgType(name, expected, value) {
  const kind = name.includes('.') ? 'property' : 'argument';
  const what = /^[a-z]+$/.test(expected) ? `of type ${expected}` : expected;
  return codedTypeError('ERR_INVALID_ARG_TYPE',
                        `The "${name}" ${kind} must be ${what}.${describeReceived(value)}`);
}

function validateObject(value, name) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgType(name, 'object', value);
  }
}

function validateInteger(value, name, min, max) {
  if (typeof value !== 'number') throw invalidArgType(name, 'number', value);
  let range = null;
  if (!Number.isInteger(value)) range = 'an integer';
  else if (value < min || value > max) range = `>= ${min} && <= ${max}`;
  if (range !== null) {
    throw codedRangeError('ERR_OUT_OF_RANGE',
                          `The value of "${name}" is out of range. It must be ${range}. ` +
                          `Received ${inspect(value)}`);
  }
}

module.exports = {
  // public
  createBufferPool,
  releaseBuffer,
  BufferPool,
  POISON_BYTE,
  // server-internal
  retainChunk,
  releaseHold,
  holdsReference,
  isPoolAllocator,
  onBufferAvailable,
  offBufferAvailable,
};
