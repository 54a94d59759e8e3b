#include "core/http1/line_fold_scanner.h"

namespace sluice {

LineFoldScanner::Result LineFoldScanner::Scan(const char* end,
                                              bool stop_at_end) {
  const char* p = from_;
  if (p == nullptr) return kOk;
  for (; p < end; p++) {
    char c = *p;
    switch (state_) {
      case kLineStart:
        if (c == ' ' || c == '\t') return kFold;
        if (c == '\n') return kBareLfEnd;
        state_ = c == '\r' ? kBlankCr : kInLine;
        break;
      case kBlankCr:
        if (c == '\n') {
          state_ = kSectionEnd;
          if (stop_at_end) {
            from_ = p + 1;
            return kOk;
          }
        } else {
          state_ = kInLine;  // "\r\n\rX": llhttp's own error
        }
        break;
      case kSectionEnd:
        // Bytes after the blank line belong to the next part; only a
        // caller that keeps scanning (a chunked body) gets here, and the
        // chunk-size line starts a line.
        state_ = kLineStart;
        p--;
        break;
      case kInLine:
        if (c == '\n') state_ = kLineStart;
        break;
    }
  }
  from_ = p;
  return kOk;
}

LineFoldScanner::Result LineFoldScanner::Skip(const char* at,
                                              const char* end,
                                              bool whitespace_folds) {
  if (!armed_) return kOk;
  Result r = Scan(at, false);
  if (r != kOk) return r;
  if (whitespace_folds && state_ == kLineStart && at < end &&
      (*at == ' ' || *at == '\t')) {
    return kFold;
  }
  if (at < end) state_ = kInLine;
  from_ = end;
  return kOk;
}

LineFoldScanner::Result LineFoldScanner::Span(const char* at,
                                              const char* end) {
  return Skip(at, end, true);
}

LineFoldScanner::Result LineFoldScanner::Body(const char* at,
                                              const char* end) {
  return Skip(at, end, false);
}

LineFoldScanner::Result LineFoldScanner::ReadEnd(const char* end) {
  if (!armed_) return kOk;
  return Scan(end, false);
}

LineFoldScanner::Result LineFoldScanner::HeadEnd(const char* end,
                                                 bool chunked) {
  if (!armed_) return kOk;
  Result r = Scan(end, true);
  if (r != kOk || !chunked) {
    armed_ = false;
    return r;
  }
  // The chunk-size line that follows starts a line.
  state_ = kLineStart;
  return kOk;
}

LineFoldScanner::Result LineFoldScanner::MessageEnd(const char* end) {
  if (!armed_) return kOk;
  armed_ = false;
  return Scan(end, true);
}

}  // namespace sluice
