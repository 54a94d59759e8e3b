#include "core/files/content_types.h"

#include <cstring>
#include <string>

namespace sluice {

namespace {

// Sorted by `ext` (binary search). What static sites serve; anything
// else is application/octet-stream.
const ContentTypeEntry kTable[] = {
    {"aac", "audio/aac", false},
    {"avif", "image/avif", false},
    {"bmp", "image/bmp", true},
    {"cjs", "text/javascript; charset=utf-8", true},
    {"css", "text/css; charset=utf-8", true},
    {"csv", "text/csv; charset=utf-8", true},
    {"eot", "application/vnd.ms-fontobject", true},
    {"gif", "image/gif", false},
    {"gz", "application/gzip", false},
    {"htm", "text/html; charset=utf-8", true},
    {"html", "text/html; charset=utf-8", true},
    {"ico", "image/vnd.microsoft.icon", true},
    {"jpeg", "image/jpeg", false},
    {"jpg", "image/jpeg", false},
    {"js", "text/javascript; charset=utf-8", true},
    {"json", "application/json; charset=utf-8", true},
    {"jsonld", "application/ld+json", true},
    {"map", "application/json; charset=utf-8", true},
    {"md", "text/markdown; charset=utf-8", true},
    {"mjs", "text/javascript; charset=utf-8", true},
    {"mp3", "audio/mpeg", false},
    {"mp4", "video/mp4", false},
    {"oga", "audio/ogg", false},
    {"ogg", "audio/ogg", false},
    {"ogv", "video/ogg", false},
    {"otf", "font/otf", true},
    {"pdf", "application/pdf", false},
    {"png", "image/png", false},
    {"svg", "image/svg+xml", true},
    {"tar", "application/x-tar", false},
    {"ttf", "font/ttf", true},
    {"txt", "text/plain; charset=utf-8", true},
    {"wasm", "application/wasm", true},
    {"wav", "audio/wav", false},
    {"webm", "video/webm", false},
    {"webmanifest", "application/manifest+json; charset=utf-8", true},
    {"webp", "image/webp", false},
    {"woff", "font/woff", false},
    {"woff2", "font/woff2", false},
    {"xml", "application/xml", true},
    {"zip", "application/zip", false},
};

const ContentTypeEntry kDefault = {"", "application/octet-stream", false};

}  // namespace

const ContentTypeEntry* ContentTypeTable(size_t* count) {
  *count = sizeof(kTable) / sizeof(kTable[0]);
  return kTable;
}

const ContentTypeEntry& ContentTypeFor(std::string_view path) {
  size_t slash = path.rfind('/');
  std::string_view name =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 >= name.size() ||
      name.size() - dot - 1 > 15) {
    return kDefault;
  }
  char ext[16];
  size_t n = name.size() - dot - 1;
  for (size_t i = 0; i < n; i++) {
    char c = name[dot + 1 + i];
    ext[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  ext[n] = '\0';
  size_t lo = 0, hi = sizeof(kTable) / sizeof(kTable[0]);
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int c = std::strcmp(kTable[mid].ext, ext);
    if (c == 0) return kTable[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return kDefault;
}

}  // namespace sluice
