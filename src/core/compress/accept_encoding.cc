#include "core/compress/accept_encoding.h"

#include <cstdlib>
#include <string>

#include "core/common/text.h"

namespace sluice {

namespace {

// Number(text) for a q-value, clamped to [0, 1]; NaN → 0.
double ParseQ(std::string_view v) {
  v = TrimOws(v);
  if (v.empty()) return 0;  // Number('') is 0
  std::string s(v);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || d != d) return 0;
  if (d < 0) return 0;
  if (d > 1) return 1;
  return d;
}

}  // namespace

const char* CodingName(Coding c) {
  switch (c) {
    case Coding::kGzip: return "gzip";
    case Coding::kDeflate: return "deflate";
    case Coding::kBrotli: return "br";
    default: return "";
  }
}

Coding NegotiateCoding(std::string_view ae, bool has_header,
                       const Coding* encodings, size_t count) {
  if (!has_header) return Coding::kIdentity;
  // q per name as listed (first occurrence wins), star, identity.
  double q_of[4] = {-1, -1, -1, -1};  // by Coding value
  double star = -1, identity = -1, min_q = 1;
  bool any = false;
  ForEachPart(ae, ',', [&](std::string_view part) {
    size_t semi = part.find(';');
    std::string name =
        AsciiLowerCopy(TrimOws(semi == std::string_view::npos ? part : part.substr(0, semi)));
    if (name.empty()) return;
    any = true;
    double q = 1;
    if (semi != std::string_view::npos) {
      ForEachPart(part.substr(semi + 1), ';', [&](std::string_view param) {
        size_t eq = param.find('=');
        if (eq == std::string_view::npos) return;
        if (!AsciiIEquals(TrimOws(param.substr(0, eq)), "q")) return;
        q = ParseQ(param.substr(eq + 1));
      });
    }
    if (name == "*") star = q;
    else if (name == "identity") identity = q;
    else if (name == "gzip" || name == "x-gzip") {
      if (q_of[1] < 0) q_of[1] = q;
    } else if (name == "deflate") {
      if (q_of[2] < 0) q_of[2] = q;
    } else if (name == "br") {
      if (q_of[3] < 0) q_of[3] = q;
    }
    if (q > 0 && q < min_q) min_q = q;
  });
  if (!any) return Coding::kIdentity;
  Coding best = Coding::kIdentity;
  double best_q = 0;
  for (size_t k = 0; k < count; k++) {
    int c = static_cast<int>(encodings[k]);
    if (c < 1 || c > 3) continue;
    double v = q_of[c] >= 0 ? q_of[c] : star;
    if (v <= 0) continue;
    if (v > best_q) {
      best = encodings[k];
      best_q = v;
    }
  }
  if (best == Coding::kIdentity) return best;
  double id_q = identity >= 0 ? identity : (star >= 0 && star <= 0 ? 0 : min_q);
  return id_q > best_q ? Coding::kIdentity : best;
}

}  // namespace sluice
