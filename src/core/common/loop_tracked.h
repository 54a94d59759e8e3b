// LoopTracked: counts the core objects of this thread's loop that may still
// get a libuv callback (an open handle, a queued threadpool job, an fs
// request). An embedder tearing down its environment closes everything and
// then waits for the count to reach zero before it lets the loop be closed
// and the code unloaded: a callback into freed code or a loop closed with
// our requests in flight both crash the process.
//
// Each owning class holds one LoopTracked member (counted from construction
// to destruction, which in the core happens only once libuv is done with
// the object). Per thread, not per loop: libuv loops are driven by exactly
// one thread (node: one per environment, main thread or worker), and the
// count is only touched on that thread.
#pragma once

#include <cstddef>

namespace sluice {

class LoopTracked {
 public:
  // Called once when the count drops to zero after NotifyWhenNone. Runs
  // inside the destructor of the last object, deep in some callback: it
  // must not free anything or re-enter the core (it should only schedule,
  // e.g. uv_close a handle of its own).
  using NoneFn = void (*)(void* arg);

  LoopTracked() { state().count++; }
  ~LoopTracked() {
    State& s = state();
    if (--s.count == 0 && s.none_fn != nullptr) {
      NoneFn fn = s.none_fn;
      s.none_fn = nullptr;
      fn(s.none_arg);
    }
  }
  LoopTracked(const LoopTracked&) = delete;
  LoopTracked& operator=(const LoopTracked&) = delete;

  // Objects alive on this thread.
  static size_t Count() { return state().count; }
  // Arms a one-shot notification for the count reaching zero (the caller
  // checks Count() first: nothing fires if it is zero already).
  static void NotifyWhenNone(NoneFn fn, void* arg) {
    state().none_fn = fn;
    state().none_arg = arg;
  }

 private:
  struct State {
    size_t count = 0;
    NoneFn none_fn = nullptr;
    void* none_arg = nullptr;
  };
  static State& state() {
    static thread_local State s;
    return s;
  }
};

}  // namespace sluice
