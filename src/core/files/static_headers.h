// The answer of a static file response, decided from the file's size and
// mtime, the mount's options and the request's validators: validators
// (ETag, Last-Modified), Cache-Control, 412 / 304 (If-Match,
// If-Unmodified-Since, If-None-Match, If-Modified-Since) and a single
// byte range (Range, If-Range → 206 / 416). Pure (no I/O, no libuv): the
// unit test drives it directly. The rules are the `send` package's
// (serve-static), so that both answer the same request the same way:
//   - ETag W/"<size hex>-<mtime ms hex>", Last-Modified from the mtime in
//     IMF-fixdate; 304 keeps ETag, Last-Modified, Cache-Control and
//     Accept-Ranges, and drops the Content-* fields.
//   - freshness as the `fresh` package: If-None-Match (weak comparison,
//     "*" matches) and If-Modified-Since are both checked when present;
//     a request Cache-Control: no-cache is never fresh.
//   - 412 / 416 keep the fields send has set on res by then (validators,
//     Cache-Control, Accept-Ranges, Content-Type; Content-Range for 416).
//   - Range as `range-parser` with combine: invalid ranges in the list
//     are skipped, none left → 416 (Content-Range: bytes */size); a
//     syntactically bad header (no "bytes=") or a stale If-Range → the
//     whole file (200); overlapping or adjacent ranges are merged, and
//     more than one range left → the whole file (200).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

struct StaticFileInfo {
  uint64_t size = 0;
  int64_t mtime_sec = 0;
  int64_t mtime_nsec = 0;
};

struct StaticHeaderOptions {
  bool etag = true;
  bool last_modified = true;
  bool cache_control = true;
  uint64_t max_age_ms = 0;
  bool immutable = false;
  bool accept_ranges = true;
};

// The request fields that matter (views valid during DecideStatic; absent
// fields are empty with has_* false).
struct StaticConditionals {
  std::string_view if_match, if_unmodified_since, if_none_match,
      if_modified_since, range, if_range, cache_control;
  bool has_if_match = false, has_if_unmodified_since = false,
       has_if_none_match = false, has_if_modified_since = false,
       has_range = false, has_if_range = false, has_cache_control = false;
  // Records `value` for a lower-case `name` if it is one of the above.
  void Take(std::string_view name, std::string_view value);
};

struct StaticDecision {
  int status = 200;             // 200, 206, 304, 412, 416
  uint64_t offset = 0;          // 200 / 206: the bytes to send
  uint64_t length = 0;
  bool body = false;            // 200 / 206: a file body follows
  // Response fields in order (no Content-Length, Date or Connection: the
  // protocol adds those; Content-Type is included for 200 / 206).
  std::vector<std::pair<std::string, std::string>> headers;
};

// Validators the response already carries (the serveStatic middleware:
// an ETag / Last-Modified the application or its setHeaders set on res
// before the answer). As send, the conditionals then compare against
// these instead of the file's own; an unparsable Last-Modified never
// matches a date.
struct StaticValidatorOverride {
  bool has_etag = false;
  std::string etag;
  bool has_last_modified = false;
  std::string last_modified;
};

// Every field name an answer may carry, in the order DecideStatic and the
// lookup emit them (the middleware's binding sends an answer's fields as
// a bit mask over this table).
inline constexpr const char* kStaticAnswerFields[] = {
    "Accept-Ranges", "Cache-Control", "Last-Modified", "ETag",
    "Content-Type",  "Content-Range", "Vary",          "Content-Encoding"};
inline constexpr size_t kStaticAnswerFieldCount =
    sizeof(kStaticAnswerFields) / sizeof(kStaticAnswerFields[0]);

// `ov` may be null (the file's own validators decide).
StaticDecision DecideStatic(const StaticFileInfo& file,
                            std::string_view content_type,
                            const StaticHeaderOptions& options,
                            const StaticConditionals& req,
                            const StaticValidatorOverride* ov = nullptr);

// The mtime in whole milliseconds as node's stat.mtime.getTime() has it
// (rounded, not truncated).
int64_t StaticMtimeMs(const StaticFileInfo& file);

// The ETag `send` gives a file of this size and mtime.
std::string StaticEtag(const StaticFileInfo& file);
// IMF-fixdate of a Unix time in seconds ("Thu, 01 Jan 1970 00:00:00 GMT").
std::string HttpDate(int64_t unix_seconds);
// Parses an HTTP date (IMF-fixdate, RFC 850, asctime) into Unix seconds.
bool ParseHttpDate(std::string_view s, int64_t* unix_seconds);

}  // namespace sluice
