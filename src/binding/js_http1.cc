#include "binding/js_http1.h"

#include <cstring>

#include "binding/js_connection.h"
#include "binding/js_core_handle.h"
#include "binding/js_values.h"
#include "binding/wire_protocol.h"

namespace sluice {

JsHttp1::JsHttp1(Napi::Env env, const Napi::Object& callbacks) : env_(env) {
#define SLUICE_H1_CALLBACK_READ(member, name) member = JsCallback(callbacks, name);
  SLUICE_HTTP1_CALLBACKS(SLUICE_H1_CALLBACK_READ)
#undef SLUICE_H1_CALLBACK_READ
}

void JsHttp1::OnRequest(Connection* c, const RequestHead& head) {
  napi_env env = env_;
  // Headers cross as ONE string, "name\0value\0..." (llhttp rejects NUL in
  // fields, so it cannot occur inside one): lib/ splits it only when the
  // handler looks at the headers. Building 2N strings and an array here
  // cost more than the rest of the call for small requests.
  // Sized first, then copied: one resize instead of four appends per field.
  size_t total = 0;
  for (const auto& h : head.headers) total += h.first.size() + h.second.size() + 2;
  std::string& packed = header_scratch_;
  packed.resize(total);
  char* p = packed.data();
  for (const auto& h : head.headers) {
    memcpy(p, h.first.data(), h.first.size());
    p += h.first.size();
    *p++ = '\0';
    memcpy(p, h.second.data(), h.second.size());
    p += h.second.size();
    *p++ = '\0';
  }
  napi_value headers = Latin1String(env, packed);
  using namespace wire;
  int flags = (head.complete ? kRequestComplete : 0) |
              (head.keep_alive ? kRequestKeepAlive : 0) |
              (head.expect_continue ? kRequestExpectContinue : 0) |
              (head.upgrade ? kRequestUpgrade : 0) |
              (head.has_expect ? kRequestHasExpect : 0) |
              (head.has_host ? kRequestHasHost : 0) |
              (head.over_request_limit ? kRequestOverLimit : 0) |
              ((head.http_major * 10 + head.http_minor) << kRequestVersionShift);
  napi_value argv[6] = {ConnectionObject(env_, c),
                        Int(env, head.seq),
                        Int(env, head.method),
                        Latin1String(env, head.url),
                        headers,
                        Int(env, flags)};
  CallJs(env_, on_request_, 6, argv);
}

void JsHttp1::OnBody(Connection* c, uint32_t seq, const char* data,
                      size_t len, int64_t user_offset) {
  napi_env env = env_;
  if (user_offset >= 0) {
    // The bytes are in the buffer the allocator gave: lib/ cuts a view of
    // it (no copy; one allocation of a small JS object).
    napi_value argv[4] = {ConnectionObject(env_, c), Int(env, seq),
                          Int(env, user_offset), Int(env, static_cast<int64_t>(len))};
    CallJs(env_, on_body_, 4, argv);
    return;
  }
  napi_value argv[3] = {ConnectionObject(env_, c), Int(env, seq), BufferCopy(env, data, len)};
  CallJs(env_, on_body_, 3, argv);
}

void JsHttp1::OnUpgrade(Connection* c, uint32_t seq, const char* head,
                         size_t len) {
  napi_value argv[3] = {ConnectionObject(env_, c), Int(env_, seq),
                        BufferCopy(env_, head, len)};
  CallJs(env_, on_upgrade_, 3, argv);
}

void JsHttp1::OnReadCopy(Connection* c, const char* data, size_t len) {
  napi_value argv[2] = {ConnectionObject(env_, c), BufferCopy(env_, data, len)};
  CallJs(env_, on_read_copy_, 2, argv);
}

void JsHttp1::OnRequestEnd(
    Connection* c, uint32_t seq,
    const std::vector<std::pair<std::string_view, std::string_view>>&
        trailers) {
  napi_env env = env_;
  napi_value t;
  if (trailers.empty()) {
    napi_get_undefined(env, &t);
  } else {
    t = FieldArray(env, trailers);
  }
  napi_value argv[3] = {ConnectionObject(env_, c), Int(env, seq), t};
  CallJs(env_, on_end_, 3, argv);
}

void JsHttp1::OnClientError(Connection* c, const ClientError& err) {
  napi_env env = env_;
  napi_value code, reason;
  napi_create_string_utf8(env, err.code, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, err.reason, NAPI_AUTO_LENGTH, &reason);
  // A parse error's input (node's err.rawPacket, copied: it is the read
  // buffer) and offset (err.bytesParsed); undefined for timeouts.
  napi_value raw, parsed;
  if (err.raw != nullptr) {
    napi_create_buffer_copy(env, err.raw_len, err.raw, nullptr, &raw);
    napi_create_double(env, static_cast<double>(err.bytes_parsed), &parsed);
  } else {
    napi_get_undefined(env, &raw);
    napi_get_undefined(env, &parsed);
  }
  napi_value argv[6] = {ConnectionObject(env_, c), Int(env, err.status), code,
                        reason, raw, parsed};
  CallJs(env_, on_client_error_, 6, argv);
}

bool JsHttp1::OnKeepAliveTimeout(Connection* c) {
  if (on_keep_alive_timeout_.IsEmpty()) return false;
  napi_value argv[1] = {ConnectionObject(env_, c)};
  CallJs(env_, on_keep_alive_timeout_, 1, argv);
  return true;
}

}  // namespace sluice
