// HeaderList: an outgoing header section (response head, 1xx, trailers)
// of either protocol, built from the serialized forms the binding receives
// from JS. Owns its bytes. HTTP/2 submits nv() (nghttp2 copies the fields
// during the submit call); HTTP/3 encodes Field(i) with QPACK. So a list
// may be a short-lived local.
#pragma once

#include <nghttp2/nghttp2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class HeaderList {
 public:
  // Appends one field. Names are sent as given (callers lower-case them).
  void Add(std::string_view name, std::string_view value);
  // ":status" with a 3-digit value; must come before regular fields.
  void AddStatus(int status);
  // "name\0value\0name\0value\0..." (the 'stream' API: names lower-cased
  // and validated by lib/http2/stream.js).
  void AddPairs(std::string_view block);
  // HTTP/1-style "Name: value\r\n" lines (the compat ServerResponse's
  // header block): names are lower-cased and the connection-specific
  // fields HTTP/2 forbids (RFC 9113 8.2.2: Connection, Keep-Alive,
  // Proxy-Connection, Transfer-Encoding, Upgrade) are dropped.
  void AddHttp1Block(std::string_view block);
  bool Has(std::string_view name) const;
  bool empty() const { return spans_.empty(); }
  // Empties the list and keeps its memory, for a list reused per call
  // (nghttp2 copies the fields when a head is submitted, so nothing
  // points into the list afterwards).
  void Clear() {
    bytes_.clear();
    spans_.clear();
    nv_.clear();
  }

  // Field i as (name, value) views into the list; valid until the next Add*.
  std::pair<std::string_view, std::string_view> Field(size_t i) const {
    const Span& f = spans_[i];
    return {std::string_view(bytes_).substr(f.name_off, f.name_len),
            std::string_view(bytes_).substr(f.value_off, f.value_len)};
  }
  // The nv array for nghttp2; valid until the next Add*.
  const nghttp2_nv* nv();
  size_t size() const { return spans_.size(); }

 private:
  struct Span {
    size_t name_off, name_len, value_off, value_len;
  };
  std::string bytes_;
  std::vector<Span> spans_;
  std::vector<nghttp2_nv> nv_;
};

}  // namespace sluice
