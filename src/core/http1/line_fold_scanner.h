// LineFoldScanner: checks the line structure of a request head, and of a
// chunked body's framing and trailers, where Debian's llhttp 8.1 is laxer
// than node's llhttp 9:
//   - obs-fold (a line continued after CRLF + SP/HTAB, RFC 9112 5.2), also
//     after an empty first line ("Transfer-Encoding:\r\n chunked"), which
//     llhttp 8.1 unfolds into one ordinary-looking value;
//   - a bare LF as the blank line that ends the head or the trailers
//     ("Host: h\r\n\n", "0\r\n\n").
// node answers both with 400, so a front proxy can never be told a
// different framing than we use.
//
// llhttp reports the head as spans (target, version, field names, values)
// and a chunked body's data as spans; it consumes the bytes between them
// itself (": ", OWS, CRLF, chunk-size lines, folds). Every one of those
// separator bytes passes through the scanner exactly once, in order,
// across any number of reads. Span bytes never hold CR or LF (llhttp's
// strict mode ends header spans there; chunk data is skipped whole).
//
// Pointers are into the read llhttp_execute is working on; the scanner
// keeps no pointer across reads (BeginRead resets it).
#pragma once

namespace sluice {

class LineFoldScanner {
 public:
  enum Result {
    kOk = 0,
    kFold,       // LF followed by SP or HTAB
    kBareLfEnd,  // the blank line ending a section is a bare LF
  };

  // Start at `at`, the first byte of the request target: what precedes it
  // (the method, a previous message's body) is not scanned.
  void Arm(const char* at) {
    armed_ = true;
    state_ = kInLine;
    from_ = at;
  }
  // The request failed: scan nothing until Arm.
  void Disarm() { armed_ = false; }
  bool armed() const { return armed_; }

  // A new read starts at `data`: its first unscanned byte.
  void BeginRead(const char* data) { from_ = data; }

  // A head span (target, version, field name or value) over [at, end):
  // scans the separators before it. llhttp starts the span of a folded
  // value's continuation AT the folding whitespace, so the span's first
  // byte counts as a separator byte too.
  Result Span(const char* at, const char* end);

  // Chunk data over [at, end): scans the framing before it; the data
  // itself (any bytes) is skipped.
  Result Body(const char* at, const char* end);

  // The read ends at `end` with a section still open (llhttp consumed
  // every byte up to `end`): scans the rest.
  Result ReadEnd(const char* end);

  // llhttp reported the head complete: scans to the blank line that ended
  // it (never past it). A chunked body's framing is scanned next (the
  // scanner stays armed); any other body is not (disarms).
  Result HeadEnd(const char* end, bool chunked);

  // llhttp reported the message complete: a chunked body's last chunk and
  // trailer section end at their blank line. Disarms.
  Result MessageEnd(const char* end);

 private:
  enum State {
    kInLine,     // inside a line
    kLineStart,  // just after a line's LF
    kBlankCr,    // CR at a line start: a CRLF blank line in progress
    kSectionEnd  // the blank line is complete
  };
  // Scans [from_, end) until a violation, or (stop_at_end) the end of the
  // section's blank line.
  Result Scan(const char* end, bool stop_at_end);
  // Scans the separators before [at, end), then skips it; with
  // whitespace_folds, a first byte SP/HTAB at a line start is a fold.
  Result Skip(const char* at, const char* end, bool whitespace_folds);

  bool armed_ = false;
  State state_ = kInLine;
  const char* from_ = nullptr;  // first unscanned byte of this read
};

}  // namespace sluice
