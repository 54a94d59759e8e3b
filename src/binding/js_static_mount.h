// serveStatic mounts as JS hands them over: the option object both
// server.serveStatic (a listener's mount) and the sluice.serveStatic
// middleware (a mount of its own, looked up per request by a NativeFile)
// build a StaticMount from (lib/files/static_mount.js normalizes it first).
#pragma once

#include <napi.h>

#include <memory>

#include "core/files/static_files.h"

namespace sluice {

// Reads lib/files/static_mount.js's normalized options into `so`.
void ReadStaticMountOptions(const Napi::Object& o, StaticMountOptions* so);

// Sets `m->root` from an absolute path (checked in JS): no trailing '/',
// "" for "/" (files are root + "/" + rel).
void SetStaticMountRoot(const std::string& abs, StaticMount* m);

// NativeFile.staticMount(root, options) -> an External holding a mount
// with the prefix "/" for the middleware (freed with the External).
Napi::Value NewMiddlewareMount(const Napi::CallbackInfo& info);

// The mount inside such an External, or null for anything else.
std::shared_ptr<const StaticMount> MiddlewareMountOf(const Napi::Value& v);

// A server's mounts as an External for another front of the same server
// (NativeServer.staticFiles() -> the HTTP/3 endpoint's `staticFiles`
// option): the External holds one shared reference, dropped when it is
// collected; whoever unwraps it takes a reference of its own.
Napi::Value WrapStaticFiles(Napi::Env env, std::shared_ptr<StaticFiles> files);

// The mounts inside such an External (type-tagged), or null for anything
// else.
std::shared_ptr<StaticFiles> StaticFilesOf(const Napi::Value& v);

}  // namespace sluice
