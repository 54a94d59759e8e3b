// JsBodyDone: the PipeBodyListener the HTTP/2 and HTTP/3 session bindings
// give a native file body (respondFile): calls a JS onDone(status) once
// when the body ends (0 complete, a UV_E* error, UV_ECANCELED when the
// stream went away first), then frees itself. The sessions call it inside
// a dispatch (an endpoint pass, a connection callback) or while the
// connection closes: it opens its own handle scope.
#pragma once

#include <node_api.h>

#include "binding/addon_data.h"
#include "binding/js_core_handle.h"
#include "core/http1/http1_pipe_body.h"

namespace sluice {

class JsBodyDone final : public PipeBodyListener {
 public:
  JsBodyDone(napi_env env, napi_value fn) : env_(env) {
    napi_create_reference(env, fn, 1, &fn_);
  }
  void OnPipeBodyDone(int status) override {
    // While the environment tears down (a worker terminated with file
    // streams open: the sessions close from the teardown hook) JS cannot
    // run: nothing to tell then.
    AddonData* addon = GetAddonData(env_);
    if (addon == nullptr || addon->tearing_down) {
      Discard();
      return;
    }
    napi_handle_scope scope;
    napi_open_handle_scope(env_, &scope);
    napi_value fn, undefined, arg, result;
    napi_get_reference_value(env_, fn_, &fn);
    napi_get_undefined(env_, &undefined);
    napi_create_int32(env_, status, &arg);
    // A throw from onDone is uncaught, as from any handler.
    UncaughtIfThrown(env_, napi_call_function(env_, undefined, fn, 1, &arg, &result));
    napi_close_handle_scope(env_, scope);
    Discard();
  }
  // Frees it without a call (a body that never started).
  void Discard() {
    napi_delete_reference(env_, fn_);
    delete this;
  }

 private:
  napi_env env_;
  napi_ref fn_ = nullptr;
};

}  // namespace sluice
