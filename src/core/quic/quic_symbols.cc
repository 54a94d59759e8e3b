#include "core/quic/quic_symbols.h"

#include <openssl/crypto.h>

#include <cstdio>

namespace sluice {

bool QuicAvailable(std::string* why) {
  // Resolved once at load (weak references), so the answer never changes.
  static int state = -1;
  static std::string reason;
  if (state < 0) {
    const void* fns[] = {
        reinterpret_cast<const void*>(&OSSL_QUIC_server_method),
        reinterpret_cast<const void*>(&OSSL_QUIC_client_method),
        reinterpret_cast<const void*>(&SSL_set1_initial_peer_addr),
        reinterpret_cast<const void*>(&SSL_write_ex2),
        reinterpret_cast<const void*>(&SSL_handle_events),
        reinterpret_cast<const void*>(&SSL_get_event_timeout),
        reinterpret_cast<const void*>(&SSL_net_read_desired),
        reinterpret_cast<const void*>(&SSL_net_write_desired),
        reinterpret_cast<const void*>(&SSL_set_blocking_mode),
        reinterpret_cast<const void*>(&SSL_new_listener),
        reinterpret_cast<const void*>(&SSL_accept_connection),
        reinterpret_cast<const void*>(&SSL_get_accept_connection_queue_len),
        reinterpret_cast<const void*>(&SSL_listen),
        reinterpret_cast<const void*>(&SSL_get_stream_type),
        reinterpret_cast<const void*>(&SSL_get_stream_id),
        reinterpret_cast<const void*>(&SSL_set_default_stream_mode),
        reinterpret_cast<const void*>(&SSL_new_stream),
        reinterpret_cast<const void*>(&SSL_set_incoming_stream_policy),
        reinterpret_cast<const void*>(&SSL_accept_stream),
        reinterpret_cast<const void*>(&SSL_shutdown_ex),
        reinterpret_cast<const void*>(&SSL_stream_conclude),
        reinterpret_cast<const void*>(&SSL_stream_reset),
        reinterpret_cast<const void*>(&SSL_get_stream_read_state),
        reinterpret_cast<const void*>(&SSL_get_stream_write_state),
        reinterpret_cast<const void*>(&SSL_get_stream_read_error_code),
        reinterpret_cast<const void*>(&SSL_get_stream_write_error_code),
        reinterpret_cast<const void*>(&SSL_get_conn_close_info),
        reinterpret_cast<const void*>(&SSL_get_value_uint),
        reinterpret_cast<const void*>(&SSL_set_value_uint),
        reinterpret_cast<const void*>(&BIO_recvmmsg),
        reinterpret_cast<const void*>(&BIO_sendmmsg),
        reinterpret_cast<const void*>(&BIO_meth_set_recvmmsg),
        reinterpret_cast<const void*>(&BIO_meth_set_sendmmsg),
    };
    bool all = true;
    for (const void* f : fns) all = all && f != nullptr;
    // OpenSSL 3.5.0 is the first with a server side; the running library
    // (not the headers compiled against) decides.
    if (!all || OpenSSL_version_num() < 0x30500000UL) {
      char buf[160];
      snprintf(buf, sizeof(buf),
               "node's OpenSSL (%s) has no QUIC server API: HTTP/3 needs "
               "OpenSSL 3.5 (Node >= 22.20, 24 or 26)",
               OpenSSL_version(OPENSSL_VERSION));
      reason = buf;
      state = 0;
    } else {
      state = 1;
    }
  }
  if (state == 0 && why != nullptr) *why = reason;
  return state == 1;
}

}  // namespace sluice
