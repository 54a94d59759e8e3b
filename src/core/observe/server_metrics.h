// ServerMetrics: a server's request counters and duration histogram, kept
// natively on its Listener by the sessions (a few integer adds per
// response, no JavaScript) and read only when asked (server.metrics(),
// the Prometheus exposition; lib/observe/metrics.js, docs/observability.md).
// Loop-thread only, like the Listener that owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice {

struct ServerMetrics {
  enum Protocol { kHttp1 = 0, kHttp2 = 1, kHttp3 = 2, kProtocols = 3 };
  // Methods counted by name; anything else is kOther.
  enum Method { kGet, kHead, kPost, kPut, kDelete, kPatch, kOptions, kOther, kMethods };
  // 1xx .. 5xx (a status outside 100..599 is not counted).
  static constexpr int kStatusClasses = 5;
  // OpenTelemetry's advice for http.server.request.duration, seconds.
  static constexpr double kBuckets[] = {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25,
                                        0.5,   0.75, 1,     2.5,  5,     7.5, 10};
  static constexpr size_t kBucketCount = sizeof(kBuckets) / sizeof(kBuckets[0]);

  uint64_t requests[kProtocols][kMethods][kStatusClasses] = {};
  // Non-cumulative: durations[p][i] counts requests in (kBuckets[i-1],
  // kBuckets[i]]; the last slot those above every bound.
  uint64_t durations[kProtocols][kBucketCount + 1] = {};
  double duration_sum[kProtocols] = {};
  // Connections accepted; bytes of connections that closed (the open
  // ones' are summed when read).
  uint64_t connections_accepted = 0;
  uint64_t closed_bytes_in = 0;
  uint64_t closed_bytes_out = 0;
  // HTTP/2 RST_STREAMs (a stream closed with an error code: the client's,
  // or ours) and GOAWAYs, each way.
  uint64_t h2_resets_received = 0;
  uint64_t h2_resets_sent = 0;
  uint64_t h2_goaways_received = 0;
  uint64_t h2_goaways_sent = 0;
  // Requests the server refused itself, by protocol and reason: HTTP/1.1's
  // answered with an error and the connection closed
  // (Http1Session::SendErrorAndClose); HTTP/2's refused with a 413, reset
  // as malformed (kBadRequest) or past the concurrent-stream limit
  // (kStreamLimit), or their connection ended by a flood protection
  // (kFlood: GOAWAY ENHANCE_YOUR_CALM, counted once per connection).
  // Names: kRefusalNames, in this order.
  enum Refusal {
    kBadRequest, kTimeout, kBodyTooLarge, kUriTooLong, kHeadersTooLarge, kFlood, kStreamLimit,
    kOtherRefusal, kRefusals
  };
  static constexpr const char* kRefusalNames[kRefusals] = {
      "bad_request", "timeout", "body_too_large", "uri_too_long", "headers_too_large",
      "flood", "stream_limit", "other"};
  uint64_t refused[kProtocols][kRefusals] = {};
  // Request streams open now (HTTP/2 and HTTP/3; HTTP/1.1's slot stays 0).
  // Each stream adds one when it is created and takes it back when it is
  // freed, whatever ended it.
  uint64_t streams_open[kProtocols] = {};
  // WebSocket messages (whole messages, not frames) received and sent,
  // sends refused for backpressure (ws's send on a socket over
  // maxBackpressure), and publishes a subscriber missed (over its
  // backpressure, or mid-way through a fragmented message of its own).
  uint64_t ws_messages_received = 0;
  uint64_t ws_messages_sent = 0;
  uint64_t ws_sends_dropped = 0;
  uint64_t ws_publishes_dropped = 0;

  static Refusal RefusalOf(int status) {
    switch (status) {
      case 400: return kBadRequest;
      case 408: return kTimeout;
      case 413: return kBodyTooLarge;
      case 414: return kUriTooLong;
      case 431: return kHeadersTooLarge;
      default: return kOtherRefusal;
    }
  }

  static Method MethodOf(std::string_view m) {
    if (m == "GET") return kGet;
    if (m == "HEAD") return kHead;
    if (m == "POST") return kPost;
    if (m == "PUT") return kPut;
    if (m == "DELETE") return kDelete;
    if (m == "PATCH") return kPatch;
    if (m == "OPTIONS") return kOptions;
    return kOther;
  }

  // A response finished: `start_ns` is uv_hrtime() when its request's head
  // was parsed, `now_ns` now.
  void RecordResponse(Protocol p, Method m, int status, uint64_t start_ns, uint64_t now_ns) {
    if (status < 100 || status > 599) return;
    requests[p][m][status / 100 - 1]++;
    const double s = static_cast<double>(now_ns - start_ns) / 1e9;
    size_t i = 0;
    while (i < kBucketCount && s > kBuckets[i]) i++;
    durations[p][i]++;
    duration_sum[p] += s;
  }
};

}  // namespace sluice
