#include "core/files/static_headers.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "core/common/text.h"

namespace sluice {

namespace {

const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                               "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// `fresh`'s token list: values separated by commas and spaces.
std::vector<std::string_view> TokenList(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == ',')) i++;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != ',') j++;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool EtagMatches(std::string_view list, const std::string& etag) {
  for (std::string_view m : TokenList(list)) {
    if (m == etag) return true;
    if (m.size() == etag.size() + 2 && m.substr(0, 2) == "W/" &&
        m.substr(2) == etag) {
      return true;
    }
    if (etag.size() == m.size() + 2 && etag.compare(0, 2, "W/") == 0 &&
        std::string_view(etag).substr(2) == m) {
      return true;
    }
  }
  return false;
}

bool HasNoCache(std::string_view cc) {
  // fresh's /(?:^|,)\s*?no-cache\s*?(?:,|$)/
  return !ForEachPart(cc, ',', [](std::string_view t) {
    return TrimOws(t) != "no-cache";  // false (found) stops
  });
}

// JavaScript's parseInt(s, 10) on a range bound: leading whitespace, an
// optional sign, digits; NaN (false) when no digit.
bool ParseIntLike(std::string_view s, int64_t* out) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
                          s[i] == '\r' || s[i] == '\f' || s[i] == '\v')) {
    i++;
  }
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  size_t start = i;
  int64_t v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    if (v < (INT64_MAX - 9) / 10) v = v * 10 + (s[i] - '0');
    i++;
  }
  if (i == start) return false;
  *out = neg ? -v : v;
  return true;
}

struct ByteRange { int64_t start, end; };

// range-parser(size, str, { combine: true }): -2 malformed, -1
// unsatisfiable, else the ranges (merged, ordered by start).
int ParseRanges(int64_t size, std::string_view str, std::vector<ByteRange>* out) {
  size_t eq = str.find('=');
  if (eq == std::string_view::npos) return -2;
  std::string_view list = str.substr(eq + 1);
  std::vector<ByteRange> rs;
  ForEachPart(list, ',', [&](std::string_view part) {
    size_t dash = part.find('-');
    std::string_view a = dash == std::string_view::npos ? part : part.substr(0, dash);
    std::string_view b;
    if (dash != std::string_view::npos) {
      b = part.substr(dash + 1);
      size_t d2 = b.find('-');  // JS split: only what lies before the next '-'
      if (d2 != std::string_view::npos) b = b.substr(0, d2);
    }
    int64_t start = 0, end = 0;
    bool hs = ParseIntLike(a, &start);
    bool he = dash != std::string_view::npos && ParseIntLike(b, &end);
    if (!hs) {
      if (!he) return;  // NaN - NaN
      start = size - end;
      end = size - 1;
    } else if (!he) {
      end = size - 1;
    }
    if (end > size - 1) end = size - 1;
    if (start > end || start < 0) return;
    rs.push_back({start, end});
  });
  if (rs.empty()) return -1;
  // combine: sort by start, merge overlapping and adjacent.
  for (size_t k = 1; k < rs.size(); k++) {
    for (size_t m = k; m > 0 && rs[m].start < rs[m - 1].start; m--) {
      std::swap(rs[m], rs[m - 1]);
    }
  }
  std::vector<ByteRange> merged;
  for (const ByteRange& r : rs) {
    if (!merged.empty() && r.start <= merged.back().end + 1) {
      if (r.end > merged.back().end) merged.back().end = r.end;
    } else {
      merged.push_back(r);
    }
  }
  *out = std::move(merged);
  return 0;
}

}  // namespace

void StaticConditionals::Take(std::string_view name, std::string_view value) {
  switch (name.size()) {
    case 5:
      if (name == "range") { range = value; has_range = true; }
      break;
    case 8:
      if (name == "if-match") { if_match = value; has_if_match = true; }
      else if (name == "if-range") { if_range = value; has_if_range = true; }
      break;
    case 13:
      if (name == "if-none-match") { if_none_match = value; has_if_none_match = true; }
      else if (name == "cache-control") { cache_control = value; has_cache_control = true; }
      break;
    case 17:
      if (name == "if-modified-since") {
        if_modified_since = value;
        has_if_modified_since = true;
      }
      break;
    case 19:
      if (name == "if-unmodified-since") {
        if_unmodified_since = value;
        has_if_unmodified_since = true;
      }
      break;
    default:
      break;
  }
}

int64_t StaticMtimeMs(const StaticFileInfo& f) {
  // node's stat.mtime is new Date(Math.round(sec * 1e3 + nsec / 1e6)): the
  // same double arithmetic, rounded half up, so an mtime of .0006 ms past a
  // millisecond gives send's ETag the next millisecond, and .9996 s moves
  // Last-Modified to the next second.
  const double ms = static_cast<double>(f.mtime_sec) * 1e3 +
                    static_cast<double>(f.mtime_nsec) / 1e6;
  return static_cast<int64_t>(std::floor(ms + 0.5));
}

std::string StaticEtag(const StaticFileInfo& f) {
  const int64_t ms = StaticMtimeMs(f);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "W/\"%llx-%llx\"",
                static_cast<unsigned long long>(f.size),
                static_cast<unsigned long long>(ms));
  return buf;
}

std::string HttpDate(int64_t t) {
  int64_t days = t >= 0 ? t / 86400 : (t - 86399) / 86400;
  int64_t secs = t - days * 86400;
  // civil_from_days
  int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
  int wday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01: Thursday
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s, %02u %s %04lld %02d:%02d:%02d GMT",
                kDays[wday], d, kMonths[m - 1], static_cast<long long>(y),
                static_cast<int>(secs / 3600), static_cast<int>(secs / 60 % 60),
                static_cast<int>(secs % 60));
  return buf;
}

bool ParseHttpDate(std::string_view s, int64_t* out) {
  char buf[64];
  if (s.size() >= sizeof(buf)) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  char wday[16], mon[4], tz[8];
  int d, y, hh, mm, ss;
  int n = 0;
  unsigned month = 0;
  auto month_of = [&](const char* m3) {
    for (unsigned k = 0; k < 12; k++) {
      if (AsciiIEquals(std::string_view(m3, 3), kMonths[k])) return k + 1;
    }
    return 0u;
  };
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  if (std::sscanf(buf, "%15[A-Za-z], %d %3s %d %d:%d:%d %7s%n", wday, &d, mon,
                  &y, &hh, &mm, &ss, tz, &n) == 8 && buf[n] == '\0') {
    month = month_of(mon);
  } else if (std::sscanf(buf, "%15[A-Za-z], %d-%3s-%d %d:%d:%d %7s%n", wday,
                         &d, mon, &y, &hh, &mm, &ss, tz, &n) == 8 &&
             buf[n] == '\0') {
    // RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT"
    month = month_of(mon);
    if (y < 100) y += y < 50 ? 2000 : 1900;
  } else if (std::sscanf(buf, "%15[A-Za-z] %3s %d %d:%d:%d %d%n", wday, mon,
                         &d, &hh, &mm, &ss, &y, &n) == 7 && buf[n] == '\0') {
    // asctime: "Sun Nov  6 08:49:37 1994"
    month = month_of(mon);
    std::strcpy(tz, "GMT");
  } else {
    return false;
  }
  if (month == 0 || d < 1 || d > 31 || hh < 0 || hh > 23 || mm < 0 ||
      mm > 59 || ss < 0 || ss > 60 || y < 1 || y > 9999) {
    return false;
  }
  if (!AsciiIEquals(tz, "GMT") && !AsciiIEquals(tz, "UTC") && !AsciiIEquals(tz, "Z")) {
    return false;
  }
  *out = DaysFromCivil(y, month, static_cast<unsigned>(d)) * 86400 +
         hh * 3600 + mm * 60 + ss;
  return true;
}

StaticDecision DecideStatic(const StaticFileInfo& file,
                            std::string_view content_type,
                            const StaticHeaderOptions& o,
                            const StaticConditionals& req,
                            const StaticValidatorOverride* ov) {
  StaticDecision d;
  std::string etag = o.etag ? StaticEtag(file) : std::string();
  const int64_t mtime_ms = StaticMtimeMs(file);
  // Last-Modified is stat.mtime.toUTCString(): the rounded milliseconds,
  // floored to the second.
  const int64_t lm_sec =
      mtime_ms >= 0 ? mtime_ms / 1000 : (mtime_ms - 999) / 1000;
  std::string last_modified =
      o.last_modified ? HttpDate(lm_sec) : std::string();
  // What the conditionals compare with: the response's own validators
  // (an override), else the file's when the options send them.
  bool has_etag = o.etag;
  std::string cmp_etag = etag;
  if (ov != nullptr && ov->has_etag) {
    has_etag = true;
    cmp_etag = ov->etag;
  }
  bool has_lm = o.last_modified;
  int64_t cmp_lm_sec = lm_sec;
  if (ov != nullptr && ov->has_last_modified) {
    has_lm = ParseHttpDate(ov->last_modified, &cmp_lm_sec);
  }
  if (o.accept_ranges) d.headers.emplace_back("Accept-Ranges", "bytes");
  if (o.cache_control) {
    std::string cc = "public, max-age=" + std::to_string(o.max_age_ms / 1000);
    if (o.immutable) cc += ", immutable";
    d.headers.emplace_back("Cache-Control", std::move(cc));
  }
  if (o.last_modified) d.headers.emplace_back("Last-Modified", last_modified);
  if (o.etag) d.headers.emplace_back("ETag", etag);

  if (req.has_if_match || req.has_if_unmodified_since ||
      req.has_if_none_match || req.has_if_modified_since) {
    // Preconditions (send's isPreconditionFailure).
    bool failed = false;
    if (req.has_if_match && !req.if_match.empty()) {
      failed = !has_etag ||
               (req.if_match != "*" && !EtagMatches(req.if_match, cmp_etag));
    } else if (req.has_if_unmodified_since && !req.if_unmodified_since.empty()) {
      int64_t t;
      if (ParseHttpDate(req.if_unmodified_since, &t)) {
        failed = !has_lm || cmp_lm_sec > t;
      }
    }
    if (failed) {
      // send has set the validators and Content-Type on res when it
      // refuses: they stay in the decision (StaticAnswer users that send
      // a refusal themselves keep only what they need).
      d.status = 412;
      d.headers.emplace_back("Content-Type", std::string(content_type));
      return d;
    }
    // fresh(): both validators when present.
    bool fresh = (req.has_if_none_match && !req.if_none_match.empty()) ||
                 (req.has_if_modified_since && !req.if_modified_since.empty());
    if (fresh && req.has_cache_control && HasNoCache(req.cache_control)) {
      fresh = false;
    }
    if (fresh && req.has_if_none_match && !req.if_none_match.empty() &&
        req.if_none_match != "*") {
      if (!has_etag || !EtagMatches(req.if_none_match, cmp_etag)) fresh = false;
    }
    if (fresh && req.has_if_modified_since && !req.if_modified_since.empty()) {
      int64_t t;
      if (!has_lm || !ParseHttpDate(req.if_modified_since, &t) ||
          !(cmp_lm_sec <= t)) {
        fresh = false;
      }
    }
    if (fresh) {
      d.status = 304;
      return d;
    }
  }

  d.headers.emplace_back("Content-Type", std::string(content_type));
  d.offset = 0;
  d.length = file.size;
  d.body = true;
  const int64_t size = static_cast<int64_t>(file.size);
  std::string_view range = req.range;
  while (!range.empty() && range.front() == ' ') range.remove_prefix(1);
  if (o.accept_ranges && req.has_range && range.substr(0, 6) == "bytes=") {
    std::vector<ByteRange> rs;
    int pr = ParseRanges(size, req.range, &rs);
    // If-Range (send's isRangeFresh).
    if (req.has_if_range && !req.if_range.empty()) {
      bool range_fresh;
      if (req.if_range.find('"') != std::string_view::npos) {
        range_fresh = has_etag && req.if_range.find(cmp_etag) != std::string_view::npos;
      } else {
        int64_t t;
        range_fresh = has_lm && ParseHttpDate(req.if_range, &t) &&
                      cmp_lm_sec <= t;
      }
      if (!range_fresh) pr = -2;
    }
    if (pr == -1) {
      d.status = 416;
      d.body = false;
      d.length = 0;
      d.headers.emplace_back("Content-Range", "bytes */" + std::to_string(size));
      return d;
    }
    if (pr == 0 && rs.size() == 1) {
      d.status = 206;
      d.offset = static_cast<uint64_t>(rs[0].start);
      d.length = static_cast<uint64_t>(rs[0].end - rs[0].start + 1);
      d.headers.emplace_back("Content-Range",
                             "bytes " + std::to_string(rs[0].start) + "-" +
                                 std::to_string(rs[0].end) + "/" +
                                 std::to_string(size));
    }
  }
  return d;
}

}  // namespace sluice
