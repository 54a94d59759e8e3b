#include "core/stream/header_list.h"

#include "core/common/text.h"

namespace sluice {

namespace {

bool IsConnectionSpecific(std::string_view lower) {
  return lower == "connection" || lower == "keep-alive" ||
         lower == "proxy-connection" || lower == "transfer-encoding" ||
         lower == "upgrade";
}

}  // namespace

void HeaderList::Add(std::string_view name, std::string_view value) {
  Span s;
  s.name_off = bytes_.size();
  s.name_len = name.size();
  bytes_.append(name.data(), name.size());
  s.value_off = bytes_.size();
  s.value_len = value.size();
  bytes_.append(value.data(), value.size());
  spans_.push_back(s);
}

void HeaderList::AddStatus(int status) {
  char v[3] = {static_cast<char>('0' + (status / 100) % 10),
               static_cast<char>('0' + (status / 10) % 10),
               static_cast<char>('0' + status % 10)};
  Add(":status", std::string_view(v, 3));
}

void HeaderList::AddPairs(std::string_view block) {
  size_t pos = 0;
  while (pos < block.size()) {
    size_t n_end = block.find('\0', pos);
    if (n_end == std::string_view::npos) return;
    size_t v_end = block.find('\0', n_end + 1);
    if (v_end == std::string_view::npos) v_end = block.size();
    Add(block.substr(pos, n_end - pos),
        block.substr(n_end + 1, v_end - n_end - 1));
    pos = v_end + 1;
  }
}

void HeaderList::AddHttp1Block(std::string_view block) {
  size_t pos = 0;
  while (pos < block.size()) {
    size_t eol = block.find("\r\n", pos);
    if (eol == std::string_view::npos) eol = block.size();
    std::string_view line = block.substr(pos, eol - pos);
    pos = eol + 2;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) continue;
    std::string_view name = line.substr(0, colon);
    std::string_view value = TrimOws(line.substr(colon + 1));
    size_t off = bytes_.size();
    for (char c : name) {
      bytes_.push_back((c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c);
    }
    std::string_view lower(bytes_.data() + off, name.size());
    if (IsConnectionSpecific(lower)) {
      bytes_.resize(off);
      continue;
    }
    Span s;
    s.name_off = off;
    s.name_len = name.size();
    s.value_off = bytes_.size();
    s.value_len = value.size();
    bytes_.append(value.data(), value.size());
    spans_.push_back(s);
  }
}

bool HeaderList::Has(std::string_view name) const {
  for (const Span& s : spans_) {
    if (std::string_view(bytes_.data() + s.name_off, s.name_len) == name) {
      return true;
    }
  }
  return false;
}

const nghttp2_nv* HeaderList::nv() {
  nv_.resize(spans_.size());
  uint8_t* base = reinterpret_cast<uint8_t*>(&bytes_[0]);
  for (size_t i = 0; i < spans_.size(); i++) {
    const Span& s = spans_[i];
    nv_[i].name = base + s.name_off;
    nv_[i].namelen = s.name_len;
    nv_[i].value = base + s.value_off;
    nv_[i].valuelen = s.value_len;
    nv_[i].flags = NGHTTP2_NV_FLAG_NONE;
  }
  return nv_.data();
}

}  // namespace sluice
