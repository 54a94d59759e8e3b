// Per-environment data of the addon (napi instance data): the constructors
// native code instantiates itself.
#pragma once

#include <napi.h>

namespace sluice {

struct AddonData {
  Napi::FunctionReference connection_ctor;
  Napi::FunctionReference http2_session_ctor;
};

inline AddonData* GetAddonData(Napi::Env env) {
  return env.GetInstanceData<AddonData>();
}

}  // namespace sluice
