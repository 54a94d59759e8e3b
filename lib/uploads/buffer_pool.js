'use strict';

// lib/uploads/buffer_pool.js — the bounded pool of request-body read buffers, and the
// registry that says who owns which bytes (zero-copy uploads).
//
// The pool's API is specified in docs/api.md ("The buffer pool in detail");
// the reference protocol between the pool and the server (retainChunk,
// releaseHold, isPoolAllocator, on/offBufferAvailable) in
// docs/architecture.md ("Body buffer references").

const { constants: { MAX_LENGTH } } = require('buffer');
const { inspect } = require('util');
const { codedError, codedTypeError, codedRangeError, received } = require('../common/errors');

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
// below; a SettledChunk around it when retained with a settlement); null
// once it was released.
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
    let ref = view.#ref;
    if (ref === null) return null;
    view.#ref = null;
    if (ref instanceof SettledChunk) {
      // A chunk whose release someone waits for (HTTP/2 window credit).
      ref.settlement.settle();
      ref = ref.lease;
    }
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
    // Settlements of chunks cut under this lease (retainChunk's second
    // argument), settled when the chunks are collected unreleased; null
    // while none was given.
    this.settlements = null;
  }
}

class Lease {
  constructor(slot) {
    this.count = new LeaseCount(slot);
  }
}

// The reference of a chunk retained with a settlement: its Lease (as any
// chunk's) and the settlement, settled once when the reference is dropped.
class SettledChunk {
  constructor(lease, settlement) {
    this.lease = lease;
    this.settlement = settlement;
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
  // settle() is idempotent: those of released chunks did their work.
  const settlements = count.settlements;
  if (settlements !== null) {
    count.settlements = null;
    for (let i = 0; i < settlements.length; i++) settlements[i].settle();
  }
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
    this.dryWaits = 0;              // times it went dry
    this.notifyScheduled = false;
    this.listeners = new Set();
    this.notify = () => this.runListeners();  // one closure per pool
  }

  alloc() {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.allocated >= this.maxBuffers) {
        // A dry wait: a reader stopped until a buffer comes back (counted
        // once per wait, server.metrics()).
        if (!this.dry) this.dryWaits++;
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
      dryWaits: this.dryWaits,
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

// settlement (optional): an object whose settle() is called once when
// the chunk's reference is dropped — released, or collected unreleased
// (from the FinalizationRegistry's callback). It must not reference the
// chunk. HTTP/2 credits flow-control windows this way.
function retainChunk(chunk, settlement) {
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
  if (settlement === undefined) {
    new RefStamp(chunk, lease);  // eslint-disable-line no-new
  } else {
    new RefStamp(chunk, new SettledChunk(lease, settlement));  // eslint-disable-line no-new
    const count = lease.count;
    if (count.settlements === null) count.settlements = [];
    count.settlements.push(settlement);
  }
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

// True for a view of memory some pool owns (a request body chunk, released
// or not): such memory may be read into again once its chunks are
// released, so a response write must not keep it by reference.
function isPoolMemory(view) {
  const memory = view.buffer;
  return typeof memory === 'object' && memory !== null && MemoryStamp.slotOf(memory) !== undefined;
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

function invalidArgType(name, expected, value) {
  const kind = name.includes('.') ? 'property' : 'argument';
  const what = /^[a-z]+$/.test(expected) ? `of type ${expected}` : expected;
  return codedTypeError('ERR_INVALID_ARG_TYPE',
                        `The "${name}" ${kind} must be ${what}.${received(value)}`);
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

// The stats of the pool whose alloc is `allocator` (a requestBufferAllocator),
// or null for any other allocator.
function poolStatsOf(allocator) {
  const state = poolStates.get(allocator);
  return state === undefined ? null : state.stats();
}

module.exports = {
  poolStatsOf,
  // public
  createBufferPool,
  releaseBuffer,
  BufferPool,
  POISON_BYTE,
  // server-internal
  retainChunk,
  releaseHold,
  holdsReference,
  isPoolMemory,
  isPoolAllocator,
  onBufferAvailable,
  offBufferAvailable,
};
