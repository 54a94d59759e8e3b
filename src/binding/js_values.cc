#include "binding/js_values.h"

#include <cstdint>

#include "core/net/connection.h"

namespace sluice {

NapiValueRef::NapiValueRef(napi_env env, napi_value value) : env_(env) {
  napi_create_reference(env, value, 1, &ref_);
}

void NapiValueRef::Release() {
  napi_delete_reference(env_, ref_);
  delete this;
}

bool IsString(napi_env env, napi_value v) {
  napi_valuetype t;
  return napi_typeof(env, v, &t) == napi_ok && t == napi_string;
}

bool IsNullish(napi_env env, napi_value v) {
  napi_valuetype t;
  return napi_typeof(env, v, &t) != napi_ok || t == napi_undefined ||
         t == napi_null;
}

bool GetBytes(napi_env env, napi_value v, const char** data, size_t* len) {
  bool is;
  if (napi_is_typedarray(env, v, &is) == napi_ok && is) {
    napi_typedarray_type type;
    size_t length, offset;
    void* base;
    napi_value ab;
    if (napi_get_typedarray_info(env, v, &type, &length, &base, &ab,
                                 &offset) != napi_ok) {
      return false;
    }
    size_t elem = 1;
    switch (type) {
      case napi_int16_array: case napi_uint16_array: elem = 2; break;
      case napi_int32_array: case napi_uint32_array: case napi_float32_array:
        elem = 4; break;
      case napi_float64_array: case napi_bigint64_array:
      case napi_biguint64_array: elem = 8; break;
      default: break;
    }
    *data = static_cast<const char*>(base);
    *len = length * elem;
    return true;
  }
  if (napi_is_dataview(env, v, &is) == napi_ok && is) {
    size_t offset;
    void* base;
    napi_value ab;
    if (napi_get_dataview_info(env, v, len, &base, &ab, &offset) != napi_ok) {
      return false;
    }
    *data = static_cast<const char*>(base);
    return true;
  }
  if (napi_is_arraybuffer(env, v, &is) == napi_ok && is) {
    void* base;
    if (napi_get_arraybuffer_info(env, v, &base, len) != napi_ok) return false;
    *data = static_cast<const char*>(base);
    return true;
  }
  return false;
}

namespace {
// napi_get_value_string_latin1 / _utf8 into a std::string.
template <napi_status (*Get)(napi_env, napi_value, char*, size_t, size_t*)>
void StringValue(napi_env env, napi_value v, std::string* out) {
  size_t len = 0;
  Get(env, v, nullptr, 0, &len);
  out->resize(len + 1);
  Get(env, v, &(*out)[0], len + 1, &len);
  out->resize(len);
}
}  // namespace

void Latin1(napi_env env, napi_value v, std::string* out) {
  StringValue<napi_get_value_string_latin1>(env, v, out);
}

void Utf8(napi_env env, napi_value v, std::string* out) {
  StringValue<napi_get_value_string_utf8>(env, v, out);
}

napi_value Int(napi_env env, int64_t n) {
  napi_value v = nullptr;
  // Most values (seqs, methods, flags, results) fit 32 bits: an Integer
  // is made without the double round trip napi_create_int64 takes.
  if (n >= INT32_MIN && n <= INT32_MAX) {
    napi_create_int32(env, static_cast<int32_t>(n), &v);
  } else {
    napi_create_int64(env, n, &v);
  }
  return v;
}

napi_value BufferCopy(napi_env env, const char* data, size_t len) {
  napi_value buf = nullptr;
  void* out;
  napi_create_buffer_copy(env, len, len > 0 ? data : "", &out, &buf);
  return buf;
}

napi_value Latin1String(napi_env env, std::string_view s) {
  napi_value v = nullptr;
  napi_create_string_latin1(env, s.data(), s.size(), &v);
  return v;
}

napi_value AddressArray(napi_env env, const Connection* c, AddressKind kind) {
  std::string ip;
  int port = 0, family = 0;
  int r = c == nullptr ? -1
          : kind == AddressKind::kPeer ? c->GetPeer(&ip, &port, &family)
                                       : c->GetLocal(&ip, &port, &family);
  napi_value out;
  if (r != 0) {
    napi_get_undefined(env, &out);
    return out;
  }
  napi_create_array_with_length(env, 3, &out);
  napi_set_element(env, out, 0, Latin1String(env, ip));
  napi_set_element(env, out, 1, Int(env, port));
  napi_set_element(env, out, 2, Int(env, family));
  return out;
}

}  // namespace sluice
