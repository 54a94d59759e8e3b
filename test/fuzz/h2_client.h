// H2Client: the HTTP/2 harness's client side. The server's bytes go into
// an nghttp2 CLIENT session (nghttp2_session_client_new, mem_recv), which
// rejects invalid HTTP/2 — frame layout and sizes, HPACK, stream states
// (HEADERS or DATA on an idle stream, DATA before the response HEADERS,
// DATA on a half-closed stream), SETTINGS ACKs nobody asked for, PUSH —
// and the harness adds what nghttp2 does not check for a client.
//
// The client session is a mirror: the fuzzer's bytes are raw frames that
// the session never produced, so the harness scans them (frame headers
// only) and replays their effect on the session before feeding it the
// server's answer to them:
//   - a HEADERS frame on a new odd stream id opens that stream
//     (nghttp2_session_set_next_stream_id + submit_request + mem_send);
//   - a RST_STREAM from the client resets the stream in the session too;
//   - each SETTINGS frame (not ACK) submits an empty SETTINGS, so the
//     server's ACKs have something to acknowledge.
// The session's own output is discarded. Leniency, on purpose: the
// session's windows are 2^31-1 (the fuzzer's WINDOW_UPDATEs are not
// mirrored, flow control is nghttp2's own business) and the server's
// SETTINGS_MAX_CONCURRENT_STREAMS is raised to 2^31-1 before the session
// reads it (the session must open every stream the fuzzer opened); nghttp2's
// HTTP messaging checks are off (the request it "sent" is a stand-in GET;
// content-length and HEAD are checked here, with the server's knowledge).
//
// Invariants (FUZZ_CHECK):
//   1. the client session reports no error (error_callback2,
//      on_invalid_frame_recv, mem_recv < 0): the output is valid HTTP/2.
//      Exception, precisely: a GOAWAY with an error code ends the check —
//      nothing after it is fed (a client drops the connection there,
//      RFC 9113 5.4.1) and the server must not send any frame after it.
//   2. HEADERS and DATA only on odd streams the client opened (a HEADERS
//      frame the fuzzer sent, or a stream the server reported); no
//      PUSH_PROMISE.
//   3. no HEADERS/DATA on a stream after its END_STREAM or after the
//      server's RST_STREAM on it.
//   4. DATA never more than the response's content-length, and exactly it
//      at END_STREAM (not for HEAD, 204, 304); no DATA for HEAD.
//   5. the body (decoded when it has a content-encoding) is the pattern
//      the delegate produced, and at END_STREAM it is complete: as long as
//      the delegate's body and, compressed, a finished stream.
//   6. CheckComplete: each stream the server closed without error after
//      responding to a complete request (the caller's list) has a final
//      HEADERS and END_STREAM at the client, unless the client reset it.
//      The caller skips this when the connection was cut (closed without
//      a FIN: queued bytes may be dropped by design).
#pragma once

#include <llhttp.h>
#include <nghttp2/nghttp2.h>

#include <climits>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "body_decoder.h"
#include "harness.h"

namespace fuzz {

// What the response body of a stream should decode to.
struct ExpectedBody {
  size_t length = 0;  // 0 for a response without a body (HEAD, 204)
  // Its content-encoding (also on a HEAD response: the header is there).
  sluice::Coding coding = sluice::Coding::kIdentity;
};

// What the server side (the harness's delegate) knows about a stream.
class H2Expectations {
 public:
  virtual ~H2Expectations() = default;
  virtual bool Reported(int32_t id) const = 0;  // OnStream was called
  virtual bool IsHead(int32_t id) const = 0;
  virtual const ExpectedBody* Body(int32_t id) const = 0;  // null: unknown
};

class H2Client {
 public:
  H2Client(const H2Expectations* x, bool upgrade) : x_(x), upgrade_(upgrade) {
    llhttp_settings_init(&h1_settings_);
    llhttp_init(&h1_, HTTP_RESPONSE, &h1_settings_);
    if (!upgrade_) CreateSession();
  }
  ~H2Client() {
    if (getenv("FUZZ_VERBOSE")) {  // what was checked, for a replayed input
      for (auto& it : ss_) {
        fprintf(stderr, "h2 client: stream %d status %d%s%s%s data %llu decoded %llu (%s)\n",
                it.first, it.second.status, it.second.final_headers ? " headers" : "",
                it.second.ended ? " ended" : "", it.second.reset ? " reset" : "",
                static_cast<unsigned long long>(it.second.data),
                static_cast<unsigned long long>(it.second.decoded),
                CodingName(it.second.dec.coding()));
      }
    }
    if (cs_) nghttp2_session_del(cs_);
  }
  H2Client(const H2Client&) = delete;
  H2Client& operator=(const H2Client&) = delete;

  // The fuzzer's bytes, in order, before they are written.
  void Sent(const std::string& bytes) {
    if (!scanning_) {
      cbuf_.append(bytes);
      size_t at = cbuf_.find(kPreface, 0, kPrefaceLen);
      if (at == std::string::npos) {
        // Keep only what may still begin the preface.
        if (cbuf_.size() > kPrefaceLen) cbuf_.erase(0, cbuf_.size() - kPrefaceLen);
        return;
      }
      scanning_ = true;
      std::string rest = cbuf_.substr(at + kPrefaceLen);
      cbuf_.clear();
      Scan(rest);
      return;
    }
    Scan(bytes);
  }

  // Everything received so far; the new part is checked.
  void Received(const std::string& all) {
    while (fed_ < all.size() && !done_) {
      if (!cs_) {
        if (!ParseHttp1(all)) return;
        continue;
      }
      ApplyActions();
      if (all.size() - fed_ < 9) return;
      const uint8_t* h = reinterpret_cast<const uint8_t*>(all.data()) + fed_;
      size_t len = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      if (all.size() - fed_ < 9 + len) return;
      Frame(all.data() + fed_, 9 + len);
      fed_ += 9 + len;
    }
  }

  void CheckComplete(const std::vector<int32_t>& ids) {
    if (!cs_ || done_) return;
    for (int32_t id : ids) {
      if (reset_.count(id) || unopened_.count(id)) continue;
      SStream& s = ss_[id];
      FUZZ_CHECK(s.final_headers && s.ended,
                 "stream %d: closed by the server without error, but the "
                 "client has %s", id,
                 s.final_headers ? "no END_STREAM" : "no response HEADERS");
    }
  }

 private:
  static constexpr const char* kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  static constexpr size_t kPrefaceLen = 24;

  struct Action {
    enum Kind { kOpen, kReset, kSettings } kind;
    int32_t id;
  };
  struct SStream {
    bool final_headers = false;  // a final (non-1xx) response HEADERS
    bool end_pending = false;    // HEADERS with END_STREAM, block not done
    bool ended = false;          // END_STREAM seen
    bool reset = false;          // RST_STREAM from the server
    int status = 0;
    int64_t cl = -1;             // content-length
    std::string encoding;
    uint64_t data = 0;           // DATA payload bytes
    uint64_t decoded = 0;        // body bytes after decoding
    BodyDecoder dec;
  };

  // ---- the fuzzer's frames ----
  void Scan(const std::string& bytes) {
    size_t i = 0;
    while (i < bytes.size()) {
      if (skip_ > 0) {
        size_t n = std::min(skip_, bytes.size() - i);
        skip_ -= n;
        i += n;
        continue;
      }
      size_t n = std::min(9 - hdr_.size(), bytes.size() - i);
      hdr_.append(bytes, i, n);
      i += n;
      if (hdr_.size() < 9) return;
      const uint8_t* h = reinterpret_cast<const uint8_t*>(hdr_.data());
      skip_ = (size_t{h[0]} << 16) | (size_t{h[1]} << 8) | h[2];
      uint8_t type = h[3], flags = h[4];
      int32_t id = static_cast<int32_t>(((h[5] & 0x7fu) << 24) | (h[6] << 16) |
                                        (h[7] << 8) | h[8]);
      hdr_.clear();
      if (type == NGHTTP2_HEADERS && (id & 1) && id > max_open_) {
        max_open_ = id;
        opened_.insert(id);
        actions_.push_back({Action::kOpen, id});
      } else if (type == NGHTTP2_RST_STREAM && id != 0) {
        reset_.insert(id);
        actions_.push_back({Action::kReset, id});
      } else if (type == NGHTTP2_SETTINGS && id == 0 &&
                 !(flags & NGHTTP2_FLAG_ACK)) {
        actions_.push_back({Action::kSettings, 0});
      }
    }
  }

  // ---- the client session ----
  void CreateSession() {
    nghttp2_session_callbacks* cb;
    nghttp2_session_callbacks_new(&cb);
    nghttp2_session_callbacks_set_send_callback(
        cb, [](nghttp2_session*, const uint8_t*, size_t len, int,
               void*) -> ssize_t { return static_cast<ssize_t>(len); });
    nghttp2_session_callbacks_set_on_header_callback(cb, OnHeader);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cb, OnFrameRecv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, OnData);
    nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(
        cb, [](nghttp2_session*, const nghttp2_frame* f, int err, void*) {
          FUZZ_CHECK(false, "client session: invalid frame type %d on stream "
                     "%d: %s", f->hd.type, f->hd.stream_id,
                     nghttp2_strerror(err));
          return 0;
        });
    nghttp2_session_callbacks_set_error_callback2(
        cb, [](nghttp2_session*, int code, const char* msg, size_t len,
               void*) {
          FUZZ_CHECK(false, "client session error %d: %.*s", code,
                     static_cast<int>(len), msg);
          return 0;
        });
    nghttp2_option* opt;
    nghttp2_option_new(&opt);
    nghttp2_option_set_no_http_messaging(opt, 1);
    nghttp2_option_set_peer_max_concurrent_streams(opt, INT32_MAX);
    int r = nghttp2_session_client_new2(&cs_, cb, this, opt);
    nghttp2_option_del(opt);
    nghttp2_session_callbacks_del(cb);
    FUZZ_CHECK(r == 0, "nghttp2_session_client_new2: %d", r);
    nghttp2_session_set_local_window_size(cs_, NGHTTP2_FLAG_NONE, 0, INT32_MAX);
    Flush();
  }

  // The session's output goes nowhere (the fuzzer is the real client).
  void Flush() {
    for (;;) {
      const uint8_t* p;
      ssize_t n = nghttp2_session_mem_send(cs_, &p);
      FUZZ_CHECK(n >= 0, "client mem_send: %zd", n);
      if (n == 0) return;
    }
  }

  void ApplyActions() {
    while (!actions_.empty()) {
      Action a = actions_.front();
      actions_.pop_front();
      if (a.kind == Action::kSettings) {
        nghttp2_submit_settings(cs_, NGHTTP2_FLAG_NONE, nullptr, 0);
      } else if (a.kind == Action::kReset) {
        if (nghttp2_session_find_stream(cs_, a.id)) {
          nghttp2_submit_rst_stream(cs_, NGHTTP2_FLAG_NONE, a.id,
                                    NGHTTP2_CANCEL);
        }
      } else if (!(upgrade_ && a.id == 1)) {
        static const nghttp2_nv kNv[] = {
            {(uint8_t*)":method", (uint8_t*)"GET", 7, 3, 0},
            {(uint8_t*)":scheme", (uint8_t*)"http", 7, 4, 0},
            {(uint8_t*)":path", (uint8_t*)"/", 5, 1, 0},
            {(uint8_t*)":authority", (uint8_t*)"a", 10, 1, 0},
        };
        int32_t got = -1;
        if (nghttp2_session_set_next_stream_id(cs_, a.id) == 0) {
          got = nghttp2_submit_request(cs_, nullptr, kNv, 4, nullptr, nullptr);
        }
        Flush();
        if (got == a.id && nghttp2_session_find_stream(cs_, a.id)) {
          nghttp2_session_set_local_window_size(cs_, NGHTTP2_FLAG_NONE, a.id,
                                                INT32_MAX);
        } else {
          // After the server's GOAWAY: the server ignores it too.
          unopened_.insert(a.id);
        }
      }
      Flush();
    }
  }

  // h2c upgrade: the HTTP/1.1 responses up to the 101, then HTTP/2.
  bool ParseHttp1(const std::string& all) {
    const char* p = all.data() + fed_;
    llhttp_errno_t e = llhttp_execute(&h1_, p, all.size() - fed_);
    if (e == HPE_OK) {
      fed_ = all.size();
      return false;
    }
    if (e != HPE_PAUSED_UPGRADE || h1_.status_code != 101) {
      done_ = true;  // not ours to judge: fuzz_http1 checks HTTP/1.1
      return false;
    }
    fed_ = static_cast<size_t>(llhttp_get_error_pos(&h1_) - all.data());
    CreateSession();
    uint8_t none = 0;
    int r = nghttp2_session_upgrade2(cs_, &none, 0, x_->IsHead(1) ? 1 : 0,
                                     nullptr);
    FUZZ_CHECK(r == 0, "client upgrade: %s", nghttp2_strerror(r));
    opened_.insert(1);
    nghttp2_session_set_local_window_size(cs_, NGHTTP2_FLAG_NONE, 1, INT32_MAX);
    Flush();
    return true;
  }

  // One whole frame of the server's.
  void Frame(const char* f, size_t n) {
    const uint8_t* h = reinterpret_cast<const uint8_t*>(f);
    uint8_t type = h[3], flags = h[4];
    int32_t id = static_cast<int32_t>(((h[5] & 0x7fu) << 24) | (h[6] << 16) |
                                      (h[7] << 8) | h[8]);
    if (verbose_) {
      fprintf(stderr, "h2 server frame: type %d flags 0x%x stream %d len %zu", type,
              flags, id, n - 9);
      if (type == NGHTTP2_GOAWAY && n >= 17) {
        fprintf(stderr, " last %u code %u", (uint32_t{uint8_t(f[9])} << 24 | uint32_t{uint8_t(f[10])} << 16 |
                                    uint32_t{uint8_t(f[11])} << 8 | uint8_t(f[12])) & 0x7fffffffu,
                uint32_t{uint8_t(f[16])});
      }
      fprintf(stderr, "\n");
    }
    FUZZ_CHECK(!goaway_error_, "frame type %d after GOAWAY with an error",
               type);
    FUZZ_CHECK(type != NGHTTP2_PUSH_PROMISE, "PUSH_PROMISE from the server");
    std::string copy;
    if (type == NGHTTP2_HEADERS || type == NGHTTP2_DATA) {
      FUZZ_CHECK(id == 0 || ((id & 1) && (opened_.count(id) || x_->Reported(id))),
                 "%s on stream %d, which the client never opened",
                 type ? "HEADERS" : "DATA", id);
      SStream& s = ss_[id];
      FUZZ_CHECK(!s.ended, "%s on stream %d after its END_STREAM",
                 type ? "HEADERS" : "DATA", id);
      FUZZ_CHECK(!s.reset, "%s on stream %d after the server reset it",
                 type ? "HEADERS" : "DATA", id);
    } else if (type == NGHTTP2_SETTINGS && !(flags & NGHTTP2_FLAG_ACK)) {
      // The session must open every stream the fuzzer opened.
      copy.assign(f, n);
      for (size_t i = 9; i + 6 <= n; i += 6) {
        uint16_t sid = static_cast<uint16_t>((uint8_t(copy[i]) << 8) | uint8_t(copy[i + 1]));
        if (sid == NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS) {
          copy[i + 2] = 0x7f;
          copy[i + 3] = copy[i + 4] = copy[i + 5] = static_cast<char>(0xff);
        }
      }
      f = copy.data();
    }
    ssize_t r = nghttp2_session_mem_recv(cs_, reinterpret_cast<const uint8_t*>(f), n);
    FUZZ_CHECK(r == static_cast<ssize_t>(n), "client mem_recv: %s",
               r < 0 ? nghttp2_strerror(static_cast<int>(r)) : "short");
    Flush();
    if (type == NGHTTP2_HEADERS || type == NGHTTP2_CONTINUATION) {
      SStream& s = ss_[id];
      if (type == NGHTTP2_HEADERS && (flags & NGHTTP2_FLAG_END_STREAM)) {
        s.end_pending = true;
      }
      if ((flags & NGHTTP2_FLAG_END_HEADERS) && s.end_pending) s.ended = true;
    } else if (type == NGHTTP2_DATA && (flags & NGHTTP2_FLAG_END_STREAM)) {
      ss_[id].ended = true;
    } else if (type == NGHTTP2_RST_STREAM && id != 0) {
      ss_[id].reset = true;
    } else if (type == NGHTTP2_GOAWAY && n >= 17) {
      uint32_t code = (uint32_t{uint8_t(f[13])} << 24) | (uint32_t{uint8_t(f[14])} << 16) |
                      (uint32_t{uint8_t(f[15])} << 8) | uint8_t(f[16]);
      if (code != NGHTTP2_NO_ERROR) goaway_error_ = true;
    }
  }

  static H2Client* Self(void* u) { return static_cast<H2Client*>(u); }

  static int OnHeader(nghttp2_session*, const nghttp2_frame* f,
                      const uint8_t* name, size_t namelen,
                      const uint8_t* value, size_t valuelen, uint8_t,
                      void* u) {
    H2Client* self = Self(u);
    SStream& s = self->ss_[f->hd.stream_id];
    std::string_view n(reinterpret_cast<const char*>(name), namelen);
    std::string_view v(reinterpret_cast<const char*>(value), valuelen);
    FUZZ_CHECK(!n.empty(), "empty header name");
    for (char c : n) {
      FUZZ_CHECK(!(c >= 'A' && c <= 'Z'), "upper-case header name");
    }
    if (n[0] == ':') {
      FUZZ_CHECK(n == ":status", "pseudo-header %.*s in a response",
                 static_cast<int>(n.size()), n.data());
      FUZZ_CHECK(v.size() == 3, "bad :status");
      s.status = atoi(std::string(v).c_str());
    } else if (n == "content-length") {
      int64_t cl = 0;
      FUZZ_CHECK(!v.empty(), "empty content-length");
      for (char c : v) {
        FUZZ_CHECK(c >= '0' && c <= '9', "content-length '%.*s'",
                   static_cast<int>(v.size()), v.data());
        cl = cl * 10 + (c - '0');
      }
      s.cl = cl;
    } else if (n == "content-encoding") {
      s.encoding.assign(v);
    }
    return 0;
  }

  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* f, void* u) {
    H2Client* self = Self(u);
    int32_t id = f->hd.stream_id;
    if (f->hd.type == NGHTTP2_HEADERS) {
      SStream& s = self->ss_[id];
      if (!s.final_headers) {
        FUZZ_CHECK(s.status >= 100 && s.status <= 599,
                   "stream %d: response HEADERS without :status", id);
        if (s.status >= 200) {
          s.final_headers = true;
          const ExpectedBody* b = self->x_->Body(id);
          sluice::Coding c = b ? b->coding : sluice::Coding::kIdentity;
          FUZZ_CHECK(c == sluice::Coding::kIdentity ? s.encoding.empty()
                                                    : s.encoding == CodingName(c),
                     "stream %d: content-encoding '%s'", id, s.encoding.c_str());
          // HEAD, 204, 304: the header says what a body would be coded
          // with; there is no body to decode.
          bool no_body = self->x_->IsHead(id) || s.status == 204 || s.status == 304;
          s.dec.Init(no_body ? sluice::Coding::kIdentity : c);
        } else {
          FUZZ_CHECK(!(f->hd.flags & NGHTTP2_FLAG_END_STREAM),
                     "stream %d: END_STREAM on a 1xx", id);
          s.status = 0;
        }
      } else {
        FUZZ_CHECK(f->hd.flags & NGHTTP2_FLAG_END_STREAM,
                   "stream %d: trailers without END_STREAM", id);
      }
    }
    if ((f->hd.type == NGHTTP2_HEADERS || f->hd.type == NGHTTP2_DATA) &&
        (f->hd.flags & NGHTTP2_FLAG_END_STREAM)) {
      self->End(id);
    }
    return 0;
  }

  static int OnData(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data,
                    size_t len, void* u) {
    H2Client* self = Self(u);
    SStream& s = self->ss_[id];
    FUZZ_CHECK(s.final_headers, "stream %d: DATA before the response", id);
    FUZZ_CHECK(!self->x_->IsHead(id) || len == 0, "stream %d: DATA for HEAD", id);
    s.data += len;
    if (s.cl >= 0) {
      FUZZ_CHECK(s.data <= static_cast<uint64_t>(s.cl),
                 "stream %d: %llu DATA bytes, content-length %lld", id,
                 static_cast<unsigned long long>(s.data),
                 static_cast<long long>(s.cl));
    }
    bool ok = s.dec.Feed(reinterpret_cast<const char*>(data), len,
                         [&](const char* b, size_t n) {
      for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(b[i] == static_cast<char>('a' + (s.decoded + i) % 26),
                   "stream %d: body byte %llu corrupt (%s)", id,
                   static_cast<unsigned long long>(s.decoded + i),
                   CodingName(s.dec.coding()));
      }
      s.decoded += n;
    });
    FUZZ_CHECK(ok, "stream %d: %s body does not decode", id,
               CodingName(s.dec.coding()));
    return 0;
  }

  // END_STREAM of a stream's response.
  void End(int32_t id) {
    SStream& s = ss_[id];
    bool no_body = x_->IsHead(id) || s.status == 204 || s.status == 304;
    if (s.cl >= 0 && !no_body) {
      FUZZ_CHECK(s.data == static_cast<uint64_t>(s.cl),
                 "stream %d: ended after %llu of content-length %lld", id,
                 static_cast<unsigned long long>(s.data),
                 static_cast<long long>(s.cl));
    }
    const ExpectedBody* b = x_->Body(id);
    if (b && s.final_headers) {
      FUZZ_CHECK(s.decoded == b->length && s.dec.finished(),
                 "stream %d: body of %llu bytes (%s%s) at END_STREAM, the "
                 "delegate's is %zu", id,
                 static_cast<unsigned long long>(s.decoded),
                 CodingName(s.dec.coding()),
                 s.dec.finished() ? "" : ", unfinished", b->length);
    }
  }

  const H2Expectations* x_;
  bool upgrade_;
  bool verbose_ = getenv("FUZZ_VERBOSE") != nullptr;
  nghttp2_session* cs_ = nullptr;
  llhttp_t h1_;
  llhttp_settings_t h1_settings_;
  size_t fed_ = 0;
  bool done_ = false;          // nothing more is checked
  bool goaway_error_ = false;  // the server sent GOAWAY with an error code

  // The fuzzer's side.
  bool scanning_ = false;  // the preface was seen
  std::string cbuf_;
  std::string hdr_;
  size_t skip_ = 0;
  int32_t max_open_ = 0;
  std::set<int32_t> opened_, reset_, unopened_;
  std::deque<Action> actions_;

  std::map<int32_t, SStream> ss_;
};

}  // namespace fuzz
