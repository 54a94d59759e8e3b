// The OpenSSL 3.5 native QUIC API, referenced weakly.
//
// OpenSSL is node's own (docs/tls.md): the addon links no library and its
// SSL_* calls bind at load time to the copy node carries. Node >= 22.20,
// 24 and 26 carry OpenSSL 3.5 with its QUIC stack; Node 20 (3.0) and
// Node 22 before 22.20 (3.0 + quictls) do not. A strong reference to a
// missing symbol kills the whole addon at load ("symbol lookup error"),
// so every function that OpenSSL 3.0 lacks is declared weak here: the
// dynamic linker resolves it to node's copy where there is one and to
// null elsewhere (the addon is linked with -z now; weak undefined symbols
// are exempt from its failure).
//
// Weak references rather than dlsym(RTLD_DEFAULT): the calls bind through
// the same lookup as every other OpenSSL call of the addon (the node
// executable's exports, or the libssl a distribution node links, with its
// symbol versions), with no table of function pointers to keep in step
// with the declarations; presence is one null check (QuicAvailable).
//
// Compiled against node's headers: 3.5 headers declare these already (the
// pragmas below only add weakness); against 3.0 headers (Node 20's, the
// default build) the declarations, types and constants the addon uses
// are supplied here, spelled as OpenSSL 3.5 defines them (ABI facts).
#pragma once

#include <openssl/bio.h>
#include <openssl/opensslv.h>
#include <openssl/ssl.h>
#include <sys/time.h>

#include <cstdint>
#include <string>

#if OPENSSL_VERSION_NUMBER < 0x30500000L
#ifndef BIO_R_NON_FATAL
#define BIO_R_NON_FATAL 112
#endif
extern "C" {
#define SSL_WRITE_FLAG_CONCLUDE (1U << 0)
#define SSL_LISTENER_FLAG_NO_VALIDATE (1UL << 1)
#define SSL_ACCEPT_CONNECTION_NO_BLOCK (1UL << 0)
#define SSL_STREAM_TYPE_NONE 0
#define SSL_STREAM_TYPE_READ (1U << 0)
#define SSL_STREAM_TYPE_WRITE (1U << 1)
#define SSL_STREAM_TYPE_BIDI (SSL_STREAM_TYPE_READ | SSL_STREAM_TYPE_WRITE)
#define SSL_DEFAULT_STREAM_MODE_NONE 0
#define SSL_STREAM_FLAG_UNI (1U << 0)
#define SSL_STREAM_FLAG_NO_BLOCK (1U << 1)
#define SSL_INCOMING_STREAM_POLICY_ACCEPT 1
#define SSL_ACCEPT_STREAM_NO_BLOCK (1U << 0)
#define SSL_SHUTDOWN_FLAG_RAPID (1U << 0)
#define SSL_SHUTDOWN_FLAG_NO_STREAM_FLUSH (1U << 1)
#define SSL_SHUTDOWN_FLAG_NO_BLOCK (1U << 2)
#define SSL_STREAM_STATE_NONE 0
#define SSL_STREAM_STATE_OK 1
#define SSL_STREAM_STATE_WRONG_DIR 2
#define SSL_STREAM_STATE_FINISHED 3
#define SSL_STREAM_STATE_RESET_LOCAL 4
#define SSL_STREAM_STATE_RESET_REMOTE 5
#define SSL_STREAM_STATE_CONN_CLOSED 6
#define SSL_CONN_CLOSE_FLAG_LOCAL (1U << 0)
#define SSL_CONN_CLOSE_FLAG_TRANSPORT (1U << 1)
#define SSL_VALUE_CLASS_GENERIC 0
#define SSL_VALUE_CLASS_FEATURE_REQUEST 1
#define SSL_VALUE_QUIC_IDLE_TIMEOUT 5
#define SSL_VALUE_EVENT_HANDLING_MODE 6
#define SSL_VALUE_STREAM_WRITE_BUF_SIZE 7
#define SSL_VALUE_STREAM_WRITE_BUF_AVAIL 9
#define SSL_VALUE_EVENT_HANDLING_MODE_EXPLICIT 2
typedef struct ssl_shutdown_ex_args_st {
  uint64_t quic_error_code;
  const char* quic_reason;
} SSL_SHUTDOWN_EX_ARGS;
typedef struct ssl_stream_reset_args_st {
  uint64_t quic_error_code;
} SSL_STREAM_RESET_ARGS;
typedef struct ssl_conn_close_info_st {
  uint64_t error_code, frame_type;
  const char* reason;
  size_t reason_len;
  uint32_t flags;
} SSL_CONN_CLOSE_INFO;
const SSL_METHOD* OSSL_QUIC_server_method(void);
const SSL_METHOD* OSSL_QUIC_client_method(void);
int SSL_write_ex2(SSL* s, const void* buf, size_t num, uint64_t flags, size_t* written);
int SSL_handle_events(SSL* s);
int SSL_get_event_timeout(SSL* s, struct timeval* tv, int* is_infinite);
int SSL_net_read_desired(SSL* s);
int SSL_net_write_desired(SSL* s);
int SSL_set_blocking_mode(SSL* s, int blocking);
int SSL_set1_initial_peer_addr(SSL* s, const BIO_ADDR* peer_addr);
SSL* SSL_new_listener(SSL_CTX* ctx, uint64_t flags);
SSL* SSL_accept_connection(SSL* ssl, uint64_t flags);
size_t SSL_get_accept_connection_queue_len(SSL* ssl);
int SSL_listen(SSL* ssl);
int SSL_get_stream_type(SSL* s);
uint64_t SSL_get_stream_id(SSL* s);
int SSL_set_default_stream_mode(SSL* s, uint32_t mode);
SSL* SSL_new_stream(SSL* s, uint64_t flags);
int SSL_set_incoming_stream_policy(SSL* s, int policy, uint64_t aec);
SSL* SSL_accept_stream(SSL* s, uint64_t flags);
int SSL_shutdown_ex(SSL* ssl, uint64_t flags, const SSL_SHUTDOWN_EX_ARGS* args,
                    size_t args_len);
int SSL_stream_conclude(SSL* ssl, uint64_t flags);
int SSL_stream_reset(SSL* ssl, const SSL_STREAM_RESET_ARGS* args, size_t args_len);
int SSL_get_stream_read_state(SSL* ssl);
int SSL_get_stream_write_state(SSL* ssl);
int SSL_get_stream_read_error_code(SSL* ssl, uint64_t* app_error_code);
int SSL_get_stream_write_error_code(SSL* ssl, uint64_t* app_error_code);
int SSL_get_conn_close_info(SSL* ssl, SSL_CONN_CLOSE_INFO* info, size_t info_len);
int SSL_get_value_uint(SSL* s, uint32_t class_, uint32_t id, uint64_t* v);
int SSL_set_value_uint(SSL* s, uint32_t class_, uint32_t id, uint64_t v);
typedef struct bio_msg_st {
  void* data;
  size_t data_len;
  BIO_ADDR *peer, *local;
  uint64_t flags;
} BIO_MSG;
int BIO_recvmmsg(BIO* b, BIO_MSG* msg, size_t stride, size_t num_msg, uint64_t flags,
                 size_t* msgs_processed);
int BIO_sendmmsg(BIO* b, BIO_MSG* msg, size_t stride, size_t num_msg, uint64_t flags,
                 size_t* msgs_processed);
int BIO_meth_set_recvmmsg(BIO_METHOD* biom,
                          int (*f)(BIO*, BIO_MSG*, size_t, size_t, uint64_t, size_t*));
int BIO_meth_set_sendmmsg(BIO_METHOD* biom,
                          int (*f)(BIO*, BIO_MSG*, size_t, size_t, uint64_t, size_t*));
}
#endif

// Two functions of OpenSSL's QUIC internals, which node's binary exports
// (it exports all of OpenSSL) but no public header declares: a server
// connection's channel, and the connection ID the server chose for it (the
// one the client addresses its packets to). OpenSSL 3.5 has no public
// getter for a server connection's peer address; with these, the
// endpoint's own BIO (QuicEndpoint::OnDatagram) matches each datagram's
// destination connection ID to a connection. Both are plain functions over
// an opaque pointer and a fixed struct (QUIC_CONN_ID: a length byte and
// 20 bytes, RFC 9000's maximum); where a build lacks them they are null and
// the peer address is unknown, nothing else changes.
extern "C" {
struct SluiceQuicConnId {
  unsigned char id_len;
  unsigned char id[20];
};
void* ossl_quic_conn_get_channel(SSL* s);
void ossl_quic_channel_get_diag_local_cid(void* ch, SluiceQuicConnId* cid);
}

#pragma weak OSSL_QUIC_server_method
#pragma weak OSSL_QUIC_client_method
#pragma weak SSL_write_ex2
#pragma weak SSL_handle_events
#pragma weak SSL_get_event_timeout
#pragma weak SSL_net_read_desired
#pragma weak SSL_net_write_desired
#pragma weak SSL_set_blocking_mode
#pragma weak SSL_set1_initial_peer_addr
#pragma weak SSL_new_listener
#pragma weak SSL_accept_connection
#pragma weak SSL_get_accept_connection_queue_len
#pragma weak SSL_listen
#pragma weak SSL_get_stream_type
#pragma weak SSL_get_stream_id
#pragma weak SSL_set_default_stream_mode
#pragma weak SSL_new_stream
#pragma weak SSL_set_incoming_stream_policy
#pragma weak SSL_accept_stream
#pragma weak SSL_shutdown_ex
#pragma weak SSL_stream_conclude
#pragma weak SSL_stream_reset
#pragma weak SSL_get_stream_read_state
#pragma weak SSL_get_stream_write_state
#pragma weak SSL_get_stream_read_error_code
#pragma weak SSL_get_stream_write_error_code
#pragma weak SSL_get_conn_close_info
#pragma weak SSL_get_value_uint
#pragma weak SSL_set_value_uint
#pragma weak BIO_recvmmsg
#pragma weak BIO_sendmmsg
#pragma weak BIO_meth_set_recvmmsg
#pragma weak BIO_meth_set_sendmmsg
#pragma weak ossl_quic_conn_get_channel
#pragma weak ossl_quic_channel_get_diag_local_cid

namespace sluice {

// True when the running process carries every QUIC function above (and
// its server method builds a context); otherwise false with *why set to
// the reason (the OpenSSL version node carries). Cheap after the first
// call.
bool QuicAvailable(std::string* why);

}  // namespace sluice
