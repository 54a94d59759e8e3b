// LineFoldScanner: finds obs-fold (a header line continued on the next
// line after CRLF + SP/HTAB, RFC 9112 5.2) in a request head or trailer
// section, which node's llhttp 9 refuses and Debian's llhttp 8.1 accepts.
//
// llhttp 8.1 reports the head as spans (target, version, field names,
// values) and consumes the bytes between them itself: ": ", OWS, CRLF, and
// any fold. A fold after a value shows as a second value span, but a fold
// after an EMPTY first line ("Transfer-Encoding:\r\n chunked") yields one
// ordinary-looking span, and a fold of whitespace only yields none: so the
// scanner looks at the separator bytes themselves. Every byte of the head
// that is not inside a reported span passes through it exactly once, in
// order, across any number of reads; an LF followed by SP or HTAB there
// (or by a span that starts with one: llhttp starts a folded value's
// continuation span at the whitespace) is a fold. Span bytes never hold CR
// or LF (llhttp's strict mode ends a span there), so no LF hides inside
// one.
//
// Pointers are into the read llhttp_execute is working on; the scanner
// keeps no pointer across reads (BeginRead resets it).
#pragma once

namespace sluice {

class LineFoldScanner {
 public:
  // Start scanning at `at`, the first byte of the request target or of
  // the first trailer name: what precedes it (method, a previous body) is
  // not part of the section.
  void Arm(const char* at) {
    armed_ = true;
    lf_ = false;
    from_ = at;
  }
  // The section ended or the request failed: scan nothing until Arm.
  void Disarm() { armed_ = false; }
  bool armed() const { return armed_; }

  // A new read starts at `data`: its first unscanned byte.
  void BeginRead(const char* data) { from_ = data; }

  // A span starts at `at` (the bytes since the last span, or since the
  // read began, are separators) and ends at `end`. Returns true when those
  // separators hold a fold.
  bool Span(const char* at, const char* end);

  // The read ends at `end` with the section still open (llhttp consumed
  // every byte up to `end`): scans the rest. True on a fold.
  bool ReadEnd(const char* end);

  // llhttp reported the end of the section (headers or trailers complete):
  // scans up to the blank line that ended it, never past it (what follows
  // is body; every scan stops there). `end` bounds the scan (the end of
  // the read). True on a fold. Disarms.
  bool SectionEnd(const char* end);

 private:
  // Scans [from_, end); stops early at a fold (true) or at the blank line
  // that ends the section (disarms).
  bool Scan(const char* end);

  bool armed_ = false;
  bool lf_ = false;                 // the last separator byte was LF
  const char* from_ = nullptr;      // first unscanned byte of this read
};

}  // namespace sluice
