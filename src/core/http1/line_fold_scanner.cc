#include "core/http1/line_fold_scanner.h"

namespace sluice {

bool LineFoldScanner::Scan(const char* end) {
  const char* p = from_;
  if (p == nullptr) return false;
  for (; p < end; p++) {
    char c = *p;
    if (lf_) {
      if (c == ' ' || c == '\t') return true;
      if (c == '\r' || c == '\n') {
        // CR or LF right after a line's LF: the blank line that ends the
        // section (anything else there is llhttp's error). The bytes after
        // it are body or the next request: scan nothing more until Arm.
        armed_ = false;
        return false;
      }
    }
    lf_ = (c == '\n');
  }
  from_ = p;
  return false;
}

bool LineFoldScanner::Span(const char* at, const char* end) {
  if (!armed_) return false;
  if (Scan(at)) return true;
  // llhttp starts the span of a folded value's continuation AT the
  // whitespace that folds it: the span's first byte counts too.
  if (lf_ && at < end && (*at == ' ' || *at == '\t')) return true;
  // Span bytes are never CR or LF: whatever follows is not after an LF.
  lf_ = false;
  from_ = end;
  return false;
}

bool LineFoldScanner::ReadEnd(const char* end) {
  if (!armed_) return false;
  return Scan(end);
}

bool LineFoldScanner::SectionEnd(const char* end) {
  if (!armed_) return false;
  bool fold = Scan(end);
  armed_ = false;
  return fold;
}

}  // namespace sluice
