// Static request paths: from a request target to a file path relative to
// a serveStatic root, or a refusal. Pure string work (no I/O, no N-API):
// unit-tested and fuzzable on its own (test/unit/native/static_path_test.cc).
//
// Rules (docs/files.md, "serveStatic"):
//   - origin-form ("/a/b?q") and absolute-form ("http://h/a/b") targets;
//     the query and fragment are cut; "*" and authority-form never match.
//   - the mount prefix matches the RAW path (not decoded), on a segment
//     boundary: "/static" matches "/static", "/static/x", not "/staticx"
//     (as Express mount paths do).
//   - the rest is split on '/' and each segment percent-decoded once: a
//     bad escape, a NUL, invalid or overlong UTF-8 → 400; a decoded '/'
//     ("%2f") or any '\\' (raw or "%5c") → 403 (a separator the file system
//     would see but the URL did not mean).
//   - "." segments and empty ones ("//") are dropped; ".." removes the
//     segment before it, and ".." above the root → 403 (as send does for
//     "/../x"; "/a/../x" is "/x").
//   - the result is the segments joined with '/', never absolute, never
//     containing "..", "." or an empty segment.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

struct StaticPath {
  enum Kind {
    kNoMatch,    // not under the prefix (or not a path): not ours
    kOk,
    kBadRequest, // 400
    kForbidden,  // 403
  } kind = kNoMatch;
  // kOk: the decoded path relative to the root ("" for the root itself).
  std::string rel;
  // The raw path ended with '/' (or was the prefix itself followed by '/'):
  // a directory is asked for (index.html).
  bool trailing_slash = false;
  // Some segment begins with '.' (dotfiles policy).
  bool dotfile = false;
};

// `prefix` is a mount prefix as NormalizePrefix returns it.
StaticPath ParseStaticPath(std::string_view target, std::string_view prefix);

// "/static/" → "/static", "static" → "/static", "" or "/" → "/". Returns
// false for a prefix holding '?', '#', '\\', NUL or a "." / ".." segment.
bool NormalizePrefix(std::string_view in, std::string* out);

// Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool IsValidUtf8(std::string_view s);

}  // namespace sluice
