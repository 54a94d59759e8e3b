// Listener: a listening TCP socket on Node's loop, the connections it
// accepted, and the per-server machinery they share: the deadline sweep,
// the cork flush that runs once per loop turn, the Date cache.
#pragma once

#include <uv.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/common/date_cache.h"
#include "core/common/loop_tracked.h"
#include "core/common/options.h"
#include "core/files/static_files.h"
#include "core/http1/keep_alive_lines.h"
#include "core/net/server_delegate.h"
#include "core/net/session_factory.h"
#include "core/net/tls_context.h"
#include "core/observe/access_log.h"
#include "core/observe/server_metrics.h"

namespace sluice {

class Connection;

class Listener {
 public:
  // `sessions` makes each connection's protocol sessions (not owned; it
  // outlives the listener, e.g. HttpSessionFactory::Get()).
  Listener(uv_loop_t* loop, ServerDelegate* delegate, SessionFactory* sessions,
           const ServerOptions& options);
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds and listens. Returns 0 or a libuv error (UV_EADDRINUSE...).
  // reuse_port: SO_REUSEPORT is set before bind, so that other sockets
  // (other servers, threads or processes of the same user) can bind the same
  // address and port and the kernel spreads new connections across them.
  // A closed listener may listen again (node's server.listen() after
  // close()).
  int Listen(const char* host, int port, int backlog, bool reuse_port = false);
  // Binds a Unix domain socket at `path` and listens (node's listen(path)).
  // libuv removes the socket file when the handle closes. 0 or an error.
  int ListenPipe(const char* path, int backlog);
  // After ListenPipe: makes the socket file readable and/or writable by
  // all users (node's listen({ readableAll, writableAll })). 0 or an error.
  int ChmodPipe(bool readable_all, bool writable_all);
  // Listening on a path: connections are Unix sockets, without addresses.
  bool is_pipe() const { return pipe_; }
  const std::string& pipe_path() const { return pipe_path_; }
  // Fills the bound address ("127.0.0.1", port, family 4/6). 0 or error.
  int GetAddress(std::string* ip, int* port, int* family) const;
  bool listening() const { return listening_; }
  // Whether the listening socket keeps the loop alive (node's server.ref /
  // unref; connections always do). Remembered for a later Listen.
  void SetRef(bool ref);

  // Stops accepting (connections already in the accept queue are taken
  // first, see AcceptQueued), closes idle connections, lets the others
  // finish their in-flight requests (their responses carry Connection:
  // close).
  // OnServerClosed follows when the last connection is gone.
  void Close();
  void CloseAllConnections();
  void CloseIdleConnections();

  // The owner (binding) is done with this listener. It frees itself once its
  // handles and connections are closed; no delegate call happens after this
  // (the delegate is replaced by one that ignores everything, so that code
  // paths still running while connections close need no checks).
  void Release();
  bool released() const { return released_; }

  // Dispatch bracketing (see ServerDelegate). The outermost End flushes the
  // output of every connection that produced any.
  void BeginDispatch();
  void EndDispatch();
  bool in_dispatch() const { return dispatch_depth_ > 0; }

  // A connection has queued output: flush it at the end of the current
  // dispatch or, outside one, once in this loop turn.
  void MarkDirty(Connection* c);

  uv_loop_t* loop() const { return loop_; }
  ServerDelegate* delegate() const { return delegate_; }
  SessionFactory* sessions() const { return sessions_; }
  // TLS: connections accepted while a TlsServer is set speak TLS
  // (createSecureServer); nullptr: cleartext. Set before Listen.
  void set_tls(std::unique_ptr<TlsServer> tls) { tls_ = std::move(tls); }
  TlsServer* tls() const { return tls_.get(); }
  // serveStatic mounts (core/files/static_files.h); the sessions ask it
  // about each bodiless GET / HEAD before delivering it. Null until the
  // first mount (also when only SharedStaticFiles made it: no mount, no
  // lookup).
  StaticFiles* static_files() const {
    return static_files_ && !static_files_->empty() ? static_files_.get() : nullptr;
  }
  StaticFiles& EnsureStaticFiles() { return *SharedStaticFiles(); }
  // The same mounts for another front of this server (its HTTP/3
  // endpoint): shared, because that front may outlive the listener (a
  // TCP side closed or released while UDP connections still finish), and
  // made now if needed, so mounts added later apply to both.
  const std::shared_ptr<StaticFiles>& SharedStaticFiles() {
    if (!static_files_) static_files_ = std::make_shared<StaticFiles>(loop_);
    return static_files_;
  }
  const ServerOptions& options() const { return options_; }
  // The limits lib/ lets users change later as server properties
  // (maxHeadersCount, maxRequestsPerSocket, maxConnections...): read at
  // each use, so a change applies from the next request / connection.
  ServerOptions& mutable_options() { return options_; }
  // Connections closed at accept because of max_connections.
  uint64_t dropped_connections() const { return dropped_; }
  DateCache& date() { return date_; }
  KeepAliveLines& keep_alive_lines() { return keep_alive_lines_; }
  // The Alt-Svc value native answers (serveStatic) carry, as lib/'s
  // responses do ("h3=\":443\"; ma=86400" while an HTTP/3 endpoint of this
  // server listens); empty: none.
  const std::string& alt_svc() const { return alt_svc_; }
  void set_alt_svc(std::string v) { alt_svc_ = std::move(v); }
  bool closing() const { return closing_; }
  size_t connection_count() const { return connections_.size(); }
  // Request counters and durations the sessions record (ServerMetrics).
  ServerMetrics& metrics() { return metrics_; }
  // The native access log (nullptr: none); its lines are written by the
  // sessions as responses finish.
  AccessLog* access_log() const { return access_log_.get(); }
  void set_access_log(std::unique_ptr<AccessLog> log) { access_log_ = std::move(log); }
  // The open connections (the binding detaches its JS objects from them
  // before Release at environment teardown). Not stable across calls that
  // may close connections.
  const std::vector<Connection*>& connections() const { return connections_; }
  // Shared read buffer for connections reading headers: every byte read
  // into it is consumed (parsed or copied) before the read callback returns.
  char* shared_read_buffer() { return shared_read_buf_; }
  // TLS plaintext nobody else gives memory for (Connection::PumpTls),
  // kSharedReadBufferSize bytes, made on first use: the shared read
  // buffer may still hold the ciphertext being decrypted.
  char* tls_plain_buffer() {
    if (!tls_plain_buf_) tls_plain_buf_.reset(new char[kSharedReadBufferSize]);
    return tls_plain_buf_.get();
  }
  static constexpr size_t kSharedReadBufferSize = 65536;

  // Called by Connection.
  void AddConnection(Connection* c);
  void RemoveConnection(Connection* c);
  void OnConnectionFreed();
  // Runs c->ReparseHeldInput() in a dispatch later in this loop turn.
  void ScheduleReparse(Connection* c);
  // Runs c->FreeRetiredSessions() in this loop turn's check phase, after
  // the flush (Connection::ReplaceSession).
  void ScheduleFreeRetired(Connection* c);

 private:
  ~Listener();
  static void OnConnection(uv_stream_t* server, int status);
  static void OnSweep(uv_timer_t* t);
  static void OnCheck(uv_check_t* h);
  static void OnIdle(uv_idle_t* h);
  static void OnHandleClosed(uv_handle_t* h);
  void FlushDirty();
  // Adopts every connection waiting in the listening socket's accept
  // queue (Close, before the socket is closed).
  void AcceptQueued();
  void CloseServerHandle();
  void ScheduleFlush();
  void StartHandles();
  uint64_t SweepInterval() const;
  void MaybeFinishClose();
  void MaybeDelete();

  LoopTracked tracked_;  // until the handles and connections are closed
  uv_loop_t* loop_;
  ServerDelegate* delegate_;
  SessionFactory* sessions_;
  ServerOptions options_;
  std::shared_ptr<StaticFiles> static_files_;  // SharedStaticFiles
  std::unique_ptr<TlsServer> tls_;  // outlives every connection (SSL app data)
  DateCache date_;
  KeepAliveLines keep_alive_lines_;
  std::string alt_svc_;
  ServerMetrics metrics_;
  std::unique_ptr<AccessLog> access_log_;
  // The listening socket: TCP, or a Unix socket (pipe_).
  union ServerHandle {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  };
  // Before a listen: false while listening (or released); otherwise leaves
  // the closing state of an earlier close().
  bool Reopen();
  // Creates server_ for a bind that follows (0 or an error).
  int NewServerHandle(bool pipe, int tcp_family);
  int StartListening(int bind_result, int backlog);
  ServerHandle* server_ = nullptr;  // heap: a failed listen closes it async
  bool pipe_ = false;
  std::string pipe_path_;
  uv_timer_t sweep_;
  uv_check_t check_;
  uv_idle_t idle_;
  bool listening_ = false;
  bool ref_ = true;
  bool closing_ = false;
  bool server_closed_reported_ = false;
  bool released_ = false;
  bool flush_scheduled_ = false;
  int open_handles_ = 0;
  uint64_t dropped_ = 0;
  int dispatch_depth_ = 0;
  std::vector<Connection*> connections_;
  std::vector<Connection*> dirty_;
  // FlushDirty's batch, kept with dirty_ so that both keep their capacity
  // from one loop turn to the next (a fresh vector each turn regrew
  // dirty_ from nothing: several reallocations per turn with many
  // connections).
  std::vector<Connection*> flush_batch_;
  bool flushing_ = false;
  std::vector<Connection*> reparse_;
  std::vector<Connection*> free_retired_;  // ScheduleFreeRetired
  char* shared_read_buf_;
  std::unique_ptr<char[]> tls_plain_buf_;
};

// OnStaticAnswer of a TCP session (HTTP/1.1, HTTP/2): takes the lookup
// the session holds for the request (TakeHeldLookup; `held` null when the
// request is gone) and, when there was one — the answer comes from the
// lookup's job completion, outside any dispatch — brackets the answer in
// a dispatch of `l`, so its output is flushed when this guard goes (the
// lookup is freed after that). Inside Begin the session holds nothing yet
// and is inside a dispatch already.
class StaticAnswerDispatch {
 public:
  StaticAnswerDispatch(Listener* l, StaticLookupPtr* held)
      : listener_(l), lookup_(TakeHeldLookup(held)) {
    if (async()) listener_->BeginDispatch();
  }
  ~StaticAnswerDispatch() {
    if (async()) listener_->EndDispatch();
  }
  StaticAnswerDispatch(const StaticAnswerDispatch&) = delete;
  StaticAnswerDispatch& operator=(const StaticAnswerDispatch&) = delete;
  bool async() const { return lookup_ != nullptr; }

 private:
  Listener* listener_;
  StaticLookupPtr lookup_;
};

}  // namespace sluice
