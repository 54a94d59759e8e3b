#include "core/http3/huffman.h"

namespace sluice::http3 {

namespace {

// Code length in bits of each symbol, 0..255 then EOS (RFC 7541 Appendix
// B). The code is canonical: codes of one length are consecutive in
// symbol order, and each length's first code follows the previous
// length's last one shifted left. Codes[] below derives them.
constexpr uint8_t kCodeLength[257] = {
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,  //   0
    28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,  //  16
    6,  10, 10, 12, 13, 6,  8,  11, 10, 10, 8,  11, 8,  6,  6,  6,   //  32
    5,  5,  5,  6,  6,  6,  6,  6,  6,  6,  7,  8,  15, 6,  12, 10,  //  48
    13, 6,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,  7,   //  64
    7,  7,  7,  7,  7,  7,  7,  7,  8,  7,  8,  13, 19, 13, 14, 6,   //  80
    15, 5,  6,  5,  6,  5,  6,  6,  6,  5,  7,  7,  6,  6,  6,  5,   //  96
    6,  7,  6,  5,  5,  6,  7,  7,  7,  7,  7,  15, 11, 14, 13, 28,  // 112
    20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,  // 128
    24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,  // 144
    22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,  // 160
    21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,  // 176
    26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,  // 192
    19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,  // 208
    20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,  // 224
    26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,  // 240
    30,                                                              // EOS
};

constexpr unsigned kEos = 256;

struct Codes {
  uint32_t code[257];
  Codes() : code() {
    // Canonical assignment: walk lengths 5..30, symbols in order.
    uint32_t next = 0;
    unsigned prev_len = 0;
    for (unsigned len = 1; len <= 30; len++) {
      for (unsigned s = 0; s <= kEos; s++) {
        if (kCodeLength[s] != len) continue;
        if (prev_len != 0) next = (next + 1) << (len - prev_len);
        code[s] = next;
        prev_len = len;
      }
    }
  }
};

const Codes& GetCodes() {
  static const Codes codes;
  return codes;
}

// Decoder: the code tree's internal nodes are the states (255 of them for
// 257 leaves; state 0 the root). From each state, each 4-bit nibble leads
// to a next state, emitting at most one symbol on the way (no code is
// shorter than 5 bits, so 4 bits complete at most one).
enum : uint8_t {
  kEmit = 1,    // sym is output
  kFail = 2,    // EOS reached: invalid
  kAccept = 4,  // the input may end here: next is the root or a run of at
                // most 7 one bits from it (a prefix of EOS as padding)
};
struct Step {
  uint8_t next;
  uint8_t flags;
  uint8_t sym;
  uint8_t pad;  // 4 bytes: the table index is a shift, not a multiply
};

struct Decoder {
  Step step[256][16];
  Decoder() : step() {
    // Build the tree. child[n][b]: >= 0 an internal node, < 0 a leaf
    // (-1 - symbol). Node 0 is the root.
    int child[256][2];
    for (auto& c : child) c[0] = c[1] = kUnset;
    uint8_t depth[256] = {};
    bool ones[256] = {};  // the path from the root is all one bits
    ones[0] = true;
    int nodes = 1;
    const Codes& codes = GetCodes();
    for (unsigned s = 0; s <= kEos; s++) {
      int n = 0;
      unsigned len = kCodeLength[s];
      for (unsigned i = len; i-- > 1;) {
        int b = (codes.code[s] >> i) & 1;
        if (child[n][b] == kUnset) {
          child[n][b] = nodes;
          depth[nodes] = static_cast<uint8_t>(depth[n] + 1);
          ones[nodes] = ones[n] && b == 1;
          nodes++;
        }
        n = child[n][b];
      }
      child[n][codes.code[s] & 1] = -1 - static_cast<int>(s);
    }
    for (int state = 0; state < nodes; state++) {
      for (int nib = 0; nib < 16; nib++) {
        int n = state;
        Step st{};
        for (int i = 3; i >= 0; i--) {
          int c = child[n][(nib >> i) & 1];
          if (c >= 0) {
            n = c;
            continue;
          }
          unsigned sym = static_cast<unsigned>(-1 - c);
          if (sym == kEos) {
            st.flags = kFail;
            break;
          }
          st.flags |= kEmit;
          st.sym = static_cast<uint8_t>(sym);
          n = 0;
        }
        if (!(st.flags & kFail)) {
          st.next = static_cast<uint8_t>(n);
          if (ones[n] && depth[n] <= 7) st.flags |= kAccept;
        }
        step[state][nib] = st;
      }
    }
  }
  static constexpr int kUnset = 0x7fffffff;
};

const Decoder& GetDecoder() {
  static const Decoder decoder;
  return decoder;
}

}  // namespace

uint32_t HuffmanCode(unsigned sym, unsigned* bits) {
  *bits = kCodeLength[sym];
  return GetCodes().code[sym];
}

size_t HuffmanEncodedLength(const uint8_t* s, size_t n) {
  uint64_t bits = 0;
  for (size_t i = 0; i < n; i++) bits += kCodeLength[s[i]];
  return static_cast<size_t>((bits + 7) / 8);
}

void HuffmanEncode(const uint8_t* s, size_t n, std::string* out) {
  const Codes& codes = GetCodes();
  uint64_t acc = 0;  // pending bits, right-aligned
  unsigned pending = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned len = kCodeLength[s[i]];
    acc = (acc << len) | codes.code[s[i]];
    pending += len;  // < 8 + 30: fits 64 bits
    while (pending >= 8) {
      pending -= 8;
      out->push_back(static_cast<char>(acc >> pending));
    }
  }
  if (pending > 0) {
    // Pad with the most significant bits of EOS (all ones).
    unsigned pad = 8 - pending;
    out->push_back(static_cast<char>((acc << pad) | ((1u << pad) - 1)));
  }
}

bool HuffmanDecode(const uint8_t* s, size_t n, std::string* out) {
  const Decoder& d = GetDecoder();
  // The shortest code is 5 bits: at most 8n/5 symbols. Writing through a
  // pointer into room made once costs a third of push_back per symbol.
  size_t base = out->size();
  out->resize(base + n * 8 / 5 + 1);
  char* w = &(*out)[base];
  uint8_t state = 0;
  uint8_t flags = kAccept;  // an empty string is valid
  bool ok = true;
  for (size_t i = 0; i < n; i++) {
    const Step& hi = d.step[state][s[i] >> 4];
    const Step& lo = d.step[hi.next][s[i] & 0xf];
    if ((hi.flags | lo.flags) & kFail) {
      // Keep what the high nibble decoded before the failure.
      if (!(hi.flags & kFail) && (hi.flags & kEmit)) *w++ = static_cast<char>(hi.sym);
      ok = false;
      break;
    }
    *w = static_cast<char>(hi.sym);
    w += hi.flags & kEmit;
    *w = static_cast<char>(lo.sym);
    w += lo.flags & kEmit;
    state = lo.next;
    flags = lo.flags;
  }
  out->resize(static_cast<size_t>(w - out->data()));
  return ok && (flags & kAccept) != 0;
}

}  // namespace sluice::http3
