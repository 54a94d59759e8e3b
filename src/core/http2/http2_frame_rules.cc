// Http2Session::OnFrame: the RFC 9113 answers sluice gives itself, in
// front of nghttp2, so that they do not depend on the nghttp2 version node
// carries (docs/http2.md "Conformance"). Called by the FramePrescan from
// OnRead, with every byte before the frame already parsed by nghttp2.
#include <cstdint>

#include "core/http2/http2_session.h"
#include "core/http2/http2_stream.h"
#include "core/net/connection.h"

namespace sluice {

FramePrescan::Action Http2Session::OnFrame(const PrescanFrame& f) {
  if (dead() || fatal_) return FramePrescan::kStop;
  // Each Terminate below is a connection error answered before nghttp2
  // sees the frame; nothing after it is parsed. Streams already handed to
  // the embedder keep what they submitted (their responses may precede
  // the GOAWAY).
  int32_t id = f.stream_id;
  switch (f.type) {
    case FramePrescan::kPriority: {
      if (id == 0) {
        Terminate(NGHTTP2_PROTOCOL_ERROR);  // RFC 9113 6.3
        return FramePrescan::kStop;
      }
      if (f.peeked == 5) {
        int32_t dep = static_cast<int32_t>(
            ((uint32_t{f.payload[0]} << 24) | (uint32_t{f.payload[1]} << 16) |
             (uint32_t{f.payload[2]} << 8) | f.payload[3]) &
            0x7fffffffu);
        if (dep == id) {
          // A stream cannot depend on itself (RFC 9113 5.3.1): a stream
          // error on a stream nghttp2 holds; on an idle or forgotten one a
          // RST_STREAM cannot be sent (idle: forbidden; forgotten: nghttp2
          // sends none), so a connection error, which 5.4.1 allows.
          if (nghttp2_session_find_stream(session_, id) != nullptr) {
            nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id,
                                      NGHTTP2_PROTOCOL_ERROR);
            conn_->MarkDirty();
            return FramePrescan::kDrop;
          }
          Terminate(NGHTTP2_PROTOCOL_ERROR);
          return FramePrescan::kStop;
        }
      }
      return FramePrescan::kPass;
    }
    case FramePrescan::kWindowUpdate: {
      if (f.peeked != 4) return FramePrescan::kPass;  // nghttp2: size error
      uint32_t inc = ((uint32_t{f.payload[0]} << 24) |
                      (uint32_t{f.payload[1]} << 16) |
                      (uint32_t{f.payload[2]} << 8) | f.payload[3]) &
                     0x7fffffffu;
      if (inc == 0 || nghttp2_session_find_stream(session_, id) == nullptr) {
        // 0: nghttp2's PROTOCOL_ERROR. A stream nghttp2 does not hold:
        // idle is nghttp2's connection error; a closed one may still get
        // WINDOW_UPDATEs (RFC 9113 6.9), ignored.
        return FramePrescan::kPass;
      }
      // The stream's send window may not exceed 2^31-1 (RFC 9113 6.9.1):
      // a stream error FLOW_CONTROL_ERROR (newer nghttp2 would end the
      // connection). The window is never below 0 here (nghttp2 reports 0
      // for a negative one, where no increment can overflow).
      int32_t window = nghttp2_session_get_stream_remote_window_size(
          session_, id);
      if (window >= 0 && inc > static_cast<uint32_t>(INT32_MAX - window)) {
        nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, id,
                                  NGHTTP2_FLOW_CONTROL_ERROR);
        conn_->MarkDirty();
        return FramePrescan::kDrop;
      }
      return FramePrescan::kPass;
    }
    case FramePrescan::kData:
    case FramePrescan::kHeaders: {
      if ((id & 1) == 0) return FramePrescan::kPass;  // nghttp2's to refuse
      if (client_ids_.WasClosedByClient(id) && Find(id) == nullptr) {
        // DATA or HEADERS after the client's own END_STREAM or RST_STREAM,
        // the stream gone (RFC 9113 5.1 "closed"; 6.1). nghttp2 answers
        // this only while it still keeps the closed stream (not after
        // 1.61), and drops such a DATA frame before any callback.
        Terminate(NGHTTP2_STREAM_CLOSED);
        return FramePrescan::kStop;
      }
      if (f.type == FramePrescan::kHeaders && !client_ids_.Open(id)) {
        // A HEADERS on an id the client skipped (RFC 9113 5.1.1).
        Terminate(NGHTTP2_PROTOCOL_ERROR);
        return FramePrescan::kStop;
      }
      return FramePrescan::kPass;
    }
    default:
      return FramePrescan::kPass;
  }
}

}  // namespace sluice
