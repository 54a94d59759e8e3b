// The binding's plumbing between core objects and JS, written once:
//
//   CallJs        a JS call from native code with node:http's error rule.
//   CoreHandle<T> the JS handle of a core object (a connection, an HTTP/2
//                 session): the core pointer while the core object lives,
//                 and a strong reference to its own JS object meanwhile.
//   CoreWrap<W,T> the ObjectWrap base of such a handle (Attach, Detach,
//                 core()).
//   HandleFor     the handle object of a core object, made on first use.
//
// Loop thread only.
#pragma once

#include <napi.h>

#include <string>
#include <vector>

#include "core/common/result.h"

namespace sluice {

// Calls fn(argv) with `undefined` as receiver. A throw becomes an uncaught
// exception, as a throw from a node:http handler does. Returns the result,
// or nullptr when fn is empty, an argument is null (a value could not be
// made: the environment is stopping) or fn threw.
napi_value CallJs(napi_env env, const Napi::FunctionReference& fn,
                  size_t argc, const napi_value* argv);
// After a napi call into JS returned `st`: a pending exception becomes
// uncaught (napi_fatal_exception). For callers with their own receiver or
// napi_make_callback.
void UncaughtIfThrown(napi_env env, napi_status st);
// The function `callbacks[name]` lib/ passed, as a weak reference (the
// callbacks object must be kept alive by its owner), or an empty one.
Napi::FunctionReference JsCallback(const Napi::Object& callbacks,
                                   const char* name);
// For an X-macro list of callbacks (V(member, "jsName")): declares the
// members, and reads them from the callbacks object `cbs` (JsCallback).
#define SLUICE_CALLBACK_MEMBER(member, name) Napi::FunctionReference member;
#define SLUICE_CALLBACK_READ(member, name) member = JsCallback(cbs, name);
// A list of strings lib/ passed (strings, or Buffers taken as bytes);
// anything else, or a non-array, gives an empty list.
std::vector<std::string> StringList(const Napi::Value& v);

// The async context (async_hooks resource) of a native object that calls
// JS from libuv callbacks (napi_make_callback, callback scopes); destroyed
// with its owner.
class AsyncContext {
 public:
  AsyncContext() = default;
  AsyncContext(const AsyncContext&) = delete;
  AsyncContext& operator=(const AsyncContext&) = delete;
  ~AsyncContext() {
    if (ctx_) napi_async_destroy(env_, ctx_);
  }
  void Init(napi_env env, napi_value resource, const char* name) {
    env_ = env;
    napi_value n;
    napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &n);
    napi_async_init(env, resource, n, &ctx_);
  }
  napi_async_context get() const { return ctx_; }

 private:
  napi_env env_ = nullptr;
  napi_async_context ctx_ = nullptr;
};

// Held by an ObjectWrap as a member. Attach when the JS object is bound to
// its core object: it then holds itself strongly (users drop req.socket,
// the session object... while the core still reports to it); Detach when
// the core object closes: get() is then null and the object may be
// collected. Methods of the wrap check get() first (the core object may be
// gone while JS still holds the handle).
template <typename Core>
class CoreHandle {
 public:
  void Attach(Core* core, const Napi::Object& self) {
    core_ = core;
    self_ = Napi::Persistent(self);
  }
  void Detach() {
    core_ = nullptr;
    self_.Reset();
  }
  Core* get() const { return core_; }

 private:
  Core* core_ = nullptr;
  Napi::ObjectReference self_;
};

// The ObjectWrap of a JS handle of `Core` objects (JsConnection,
// JsHttp2Session): made empty by `new` from native code (HandleFor), bound
// with Attach, unbound with Detach when the core object closes. Methods
// check core() first: it is null once the core object is gone while JS
// still holds the handle.
template <typename Wrap, typename Core>
class CoreWrap : public Napi::ObjectWrap<Wrap> {
 public:
  explicit CoreWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<Wrap>(info) {}
  void Attach(Core* core) { handle_.Attach(core, this->Value()); }
  void Detach() { handle_.Detach(); }

 protected:
  Core* core() const { return handle_.get(); }

  // Methods that act on one item of the live protocol object (a request by
  // its seq, a stream by its id: info[0]) share one preamble: Wrap::live()
  // (null once closed; Wrap befriends this class) and the id. Their int
  // result crosses as a number, kResultClosed when the object is gone.
  template <typename Live, typename Id,
            int (Wrap::*M)(const Napi::CallbackInfo&, Live*, Id)>
  Napi::Value ItemCall(const Napi::CallbackInfo& info) {
    Wrap* w = static_cast<Wrap*>(this);
    Live* live = w->live();
    Id id = static_cast<Id>(info[0].As<Napi::Number>().Int64Value());
    int r = live ? (w->*M)(info, live, id) : kResultClosed;
    napi_value out = nullptr;
    napi_create_int32(info.Env(), r, &out);
    return Napi::Value(info.Env(), out);
  }

 private:
  CoreHandle<Core> handle_;
};

// The JS handle (an ObjectWrap `Wrap` with Attach(Core*)) of `core`, whose
// `user_data` slot stores it: made with `ctor` on first use. nullptr once
// the environment is stopping (JS can no longer run, but libuv callbacks
// of the current loop turn still come).
template <typename Wrap, typename Core>
napi_value HandleFor(Core* core, const Napi::FunctionReference& ctor) {
  if (core->user_data) return static_cast<Wrap*>(core->user_data)->Value();
  Napi::Object o = ctor.New({});
  Wrap* w = o.IsEmpty() ? nullptr : Wrap::Unwrap(o);
  if (w == nullptr) return nullptr;
  w->Attach(core);
  core->user_data = w;
  return o;
}

}  // namespace sluice
