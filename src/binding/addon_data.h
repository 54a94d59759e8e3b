// Per-environment data of the addon (napi instance data): the constructors
// native code instantiates itself, and what the environment's teardown
// (addon.cc, OnEnvironmentTeardown) must close before node closes the loop.
#pragma once

#include <napi.h>
#include <uv.h>

#include <memory>
#include <unordered_set>

#include "core/files/open_file_cache.h"

namespace sluice {

class JsFile;
class JsServer;

struct AddonData {
  Napi::FunctionReference connection_ctor;
  Napi::FunctionReference http2_session_ctor;
  // NativeWsHub: wsAccept recognises hub objects by it (napi_instanceof).
  Napi::FunctionReference ws_hub_ctor;
  // Set when the environment starts tearing down (worker terminated,
  // process exiting): JS cannot run any more; native code makes no JS
  // call from then on (checked where a libuv callback could reach JS).
  bool tearing_down = false;
  uv_loop_t* loop = nullptr;  // this environment's loop
  // Live objects that own core objects with libuv work: registered by
  // their constructors, removed by their destructors (loop thread).
  std::unordered_set<JsServer*> servers;
  std::unordered_set<JsFile*> files;
  // The open-file cache of this environment's loop (NativeFile.configureCache;
  // null until a server turns it on). Cleared and freed at teardown.
  std::unique_ptr<OpenFileCache> file_cache;
  // Where NativeFile.open writes a cache hit's stat (a Float64Array of 14
  // that JS gave once with NativeFile.setStatArray and keeps alive).
  double* stat_out = nullptr;
  Napi::ObjectReference stat_array;
};

inline AddonData* GetAddonData(napi_env env) {
  void* data = nullptr;
  napi_get_instance_data(env, &data);
  return static_cast<AddonData*>(data);
}

// A live object's entry in one of AddonData's sets, held as a member: from
// the object's construction until its destruction, or until the
// environment's teardown forgets it (the addon data may then be freed
// before the object).
template <typename T>
class AddonMember {
 public:
  AddonMember(napi_env env, std::unordered_set<T*> AddonData::*set, T* self)
      : addon_(GetAddonData(env)), set_(set), self_(self) {
    (addon_->*set_).insert(self_);
  }
  AddonMember(const AddonMember&) = delete;
  AddonMember& operator=(const AddonMember&) = delete;
  ~AddonMember() {
    if (addon_) (addon_->*set_).erase(self_);
  }
  void Forget() { addon_ = nullptr; }
  // Null once forgotten: the environment is tearing down.
  AddonData* get() const { return addon_; }

 private:
  AddonData* addon_;
  std::unordered_set<T*> AddonData::*set_;
  T* self_;
};

}  // namespace sluice
