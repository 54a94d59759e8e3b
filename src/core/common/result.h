// Results of the response API of both sessions: Http1Session's (by request
// seq) and Http2Session's (by stream id), and of the binding methods over
// them. 0 is success (1, kResultNoBody, where a call says so); errors are negative and never thrown in the core.
// The binding returns them to JS unchanged (binding.constants.RESULT_*,
// src/binding/wire_protocol.h): this list is their one definition.
#pragma once

namespace sluice {

// V(C++ name, JS name, value, meaning)
#define SLUICE_RESULT_LIST(V)                                                \
  V(kResultOk, RESULT_OK, 0, "done")                                         \
  V(kResultNoBody, RESULT_NO_BODY, 1,                                        \
    "StartPipeBody: no body is sent (HEAD, 204, 304), the response ended")   \
  V(kResultNoRequest, RESULT_NO_REQUEST, -1,                                 \
    "unknown request seq or stream id, or its response already finished")    \
  V(kResultHeadersSent, RESULT_HEADERS_SENT, -2, "the head was sent before") \
  V(kResultHeadersNotSent, RESULT_HEADERS_NOT_SENT, -3,                      \
    "body or end before the head")                                           \
  V(kResultClosed, RESULT_CLOSED, -4, "the connection is closing or closed") \
  V(kResultInvalid, RESULT_INVALID, -5,                                      \
    "refused by the protocol state (nghttp2) or a bad argument")             \
  V(kResultEnded, RESULT_ENDED, -6, "write after end")                       \
  /* Produced by the binding only (what JS handed over was unusable). */     \
  V(kResultBadBody, RESULT_BAD_BODY, -10, "a body of a type not sendable")   \
  V(kResultCompressFailed, RESULT_COMPRESS_FAILED, -11,                      \
    "the compressor could not be created or failed")

enum ResponseResult : int {
#define SLUICE_RESULT_ENUM(cpp, js, value, meaning) cpp = value,
  SLUICE_RESULT_LIST(SLUICE_RESULT_ENUM)
#undef SLUICE_RESULT_ENUM
};

}  // namespace sluice
