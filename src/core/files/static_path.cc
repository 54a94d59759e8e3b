#include "core/files/static_path.h"

#include <vector>

#include "core/common/text.h"

namespace sluice {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The path part of a request target, or false when it has none.
bool TargetPath(std::string_view target, std::string_view* path) {
  if (target.empty()) return false;
  if (target[0] != '/') {
    // absolute-form: scheme "://" authority path
    size_t scheme_end = target.find("://");
    if (scheme_end == std::string_view::npos || scheme_end == 0) return false;
    for (size_t i = 0; i < scheme_end; i++) {
      char c = target[i];
      bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' ||
                           c == '.'));
      if (!ok) return false;
    }
    size_t slash = target.find('/', scheme_end + 3);
    size_t stop = target.find_first_of("?#", scheme_end + 3);
    if (slash == std::string_view::npos || (stop != std::string_view::npos && stop < slash)) {
      *path = "/";  // "http://h" or "http://h?q": the root
      return true;
    }
    target.remove_prefix(slash);
  }
  size_t cut = target.find_first_of("?#");
  *path = cut == std::string_view::npos ? target : target.substr(0, cut);
  return true;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size(), i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    size_t len;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;  // continuation byte, C0/C1 (overlong), F5..FF
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; k++) {
      unsigned cc = p[i + k];
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;  // overlong, beyond Unicode, surrogate
    }
    i += len;
  }
  return true;
}

bool NormalizePrefix(std::string_view in, std::string* out) {
  std::string p = "/";
  bool ok = ForEachPart(in, '/', [&](std::string_view seg) {
    if (seg.empty()) return true;
    if (seg == "." || seg == "..") return false;
    for (char c : seg) {
      if (c == '?' || c == '#' || c == '\\' || c == '\0') return false;
    }
    if (p.size() > 1) p += '/';
    p.append(seg.data(), seg.size());
    return true;
  });
  if (!ok) return false;
  *out = std::move(p);
  return true;
}

StaticPath ParseStaticPath(std::string_view target, std::string_view prefix) {
  StaticPath r;
  std::string_view path;
  if (!TargetPath(target, &path) || path.empty() || path[0] != '/') return r;
  std::string_view rest;
  if (prefix == "/") {
    rest = path;
  } else {
    if (path.size() < prefix.size() ||
        path.compare(0, prefix.size(), prefix) != 0) {
      return r;
    }
    rest = path.substr(prefix.size());
    if (!rest.empty() && rest[0] != '/') return r;  // "/staticx"
  }
  r.trailing_slash = !rest.empty() && rest.back() == '/';
  std::vector<std::string> segs;
  std::string seg;
  // Each segment decoded; a refusal sets r.kind and stops the walk.
  bool ok = ForEachPart(rest, '/', [&](std::string_view raw) {
    seg.clear();
    for (size_t k = 0; k < raw.size(); k++) {
      char c = raw[k];
      if (c == '%') {
        if (k + 2 >= raw.size()) {
          r.kind = StaticPath::kBadRequest;
          return false;
        }
        int h = HexValue(raw[k + 1]), l = HexValue(raw[k + 2]);
        if (h < 0 || l < 0) {
          r.kind = StaticPath::kBadRequest;
          return false;
        }
        c = static_cast<char>(h * 16 + l);
        k += 2;
        if (c == '/') {
          r.kind = StaticPath::kForbidden;
          return false;
        }
      }
      if (c == '\0') {
        r.kind = StaticPath::kBadRequest;
        return false;
      }
      if (c == '\\') {
        r.kind = StaticPath::kForbidden;
        return false;
      }
      seg += c;
    }
    if (!IsValidUtf8(seg)) {
      r.kind = StaticPath::kBadRequest;
      return false;
    }
    if (seg.empty() || seg == ".") return true;
    if (seg == "..") {
      if (segs.empty()) {
        r.kind = StaticPath::kForbidden;
        return false;
      }
      segs.pop_back();
      return true;
    }
    segs.push_back(seg);
    return true;
  });
  if (!ok) return r;
  for (const std::string& s : segs) {
    if (s[0] == '.') r.dotfile = true;
    if (!r.rel.empty()) r.rel += '/';
    r.rel += s;
  }
  r.kind = StaticPath::kOk;
  return r;
}

}  // namespace sluice
