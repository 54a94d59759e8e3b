#include "core/net/listener.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/net/address.h"
#include "core/net/connection.h"
// The interface only: the released delegate must answer HTTP/1 events.
#include "core/http1/http1_delegate.h"

namespace sluice {

namespace {

// SO_REUSEPORT on the handle's socket (created, not yet bound).
int SetReusePort(uv_tcp_t* tcp) {
  uv_os_fd_t fd;
  int r = uv_fileno(reinterpret_cast<uv_handle_t*>(tcp), &fd);
  if (r != 0) return r;
  int on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) return uv_translate_sys_error(errno);
  return 0;
}

// The delegate after Release: every event is dropped. Connections closing
// after the embedder let go (environment teardown) still run session code
// that reports to "the delegate"; this keeps those paths free of checks.
// (HTTP/2 sessions check http2() for null instead.)
class ReleasedDelegate final : public ServerDelegate, public Http1Delegate {
 public:
  void OnDispatchBegin() override {}
  void OnDispatchEnd() override {}
  BufferResult AcquireBodyBuffer(Connection*, size_t, char**,
                                 size_t*) override {
    return BufferResult::kError;
  }
  void OnDrain(Connection*) override {}
  void OnConnectionClose(Connection*) override {}
  void OnServerClosed() override {}
  Http1Delegate* http1() override { return this; }
  // Http1Delegate
  void OnRequest(Connection*, const RequestHead&) override {}
  void OnBody(Connection*, uint32_t, const char*, size_t, int64_t) override {}
  void OnRequestEnd(Connection*, uint32_t, const Http1Fields&) override {}
  void OnClientError(Connection*, const ClientError&) override {}
};

ReleasedDelegate g_released_delegate;

// A connection closed at accept (maxConnections): its handle lives until
// the close callback, and teardown waits for that.
struct DroppedSocket {
  union {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } h;
  LoopTracked tracked;
};

}  // namespace

Listener::Listener(uv_loop_t* loop, ServerDelegate* delegate,
                   SessionFactory* sessions, const ServerOptions& options)
    : loop_(loop),
      delegate_(delegate),
      sessions_(sessions),
      options_(options),
      date_(loop),
      shared_read_buf_(new char[kSharedReadBufferSize]) {
  // The check handle flushes output queued outside a dispatch (timers,
  // promises) once per loop turn; the idle handle, active only while such
  // output waits, keeps the poll phase from blocking before the check runs.
  uv_check_init(loop_, &check_);
  uv_idle_init(loop_, &idle_);
  uv_timer_init(loop_, &sweep_);
  check_.data = this;
  idle_.data = this;
  sweep_.data = this;
  uv_unref(reinterpret_cast<uv_handle_t*>(&check_));
  uv_unref(reinterpret_cast<uv_handle_t*>(&idle_));
  uv_unref(reinterpret_cast<uv_handle_t*>(&sweep_));
  open_handles_ = 3;
}

Listener::~Listener() { delete[] shared_read_buf_; }

uint64_t Listener::SweepInterval() const {
  // Deadlines are checked by one timer per server (as node's
  // connectionsCheckingInterval) instead of a timer per connection: no uv
  // call per request. Its period is a fraction of the shortest timeout so
  // that small test timeouts stay accurate, within [10 ms, 1 s].
  uint64_t t = 1000;
  for (uint64_t v : {options_.headers_timeout_ms, options_.request_timeout_ms,
                     options_.keep_alive_timeout_ms, options_.linger_ms}) {
    if (v > 0 && v / 4 < t) t = v / 4;
  }
  return std::max<uint64_t>(t, 10);
}

int Listener::Listen(const char* host, int port, int backlog, bool reuse_port) {
  if (!Reopen()) return UV_EINVAL;
  struct sockaddr_storage addr;
  int r;
  const bool v6 = strchr(host, ':') != nullptr;
  if (v6) {
    r = uv_ip6_addr(host, port, reinterpret_cast<struct sockaddr_in6*>(&addr));
  } else {
    r = uv_ip4_addr(host, port, reinterpret_cast<struct sockaddr_in*>(&addr));
  }
  if (r != 0) return r;
  // With reuse_port the socket must exist before bind (uv_tcp_init_ex
  // creates it) so the option can be set on it; libuv's own
  // UV_TCP_REUSEPORT bind flag exists only from libuv 1.49 (Node 22.12).
  r = NewServerHandle(false, reuse_port ? (v6 ? AF_INET6 : AF_INET) : AF_UNSPEC);
  if (r != 0) return r;
  if (reuse_port) r = SetReusePort(&server_->tcp);
  if (r == 0) r = uv_tcp_bind(&server_->tcp, reinterpret_cast<struct sockaddr*>(&addr), 0);
  return StartListening(r, backlog);
}

int Listener::ListenPipe(const char* path, int backlog) {
  if (!Reopen()) return UV_EINVAL;
  int r = NewServerHandle(true, 0);
  if (r != 0) return r;
  r = uv_pipe_bind(&server_->pipe, path);
  if (r == 0) pipe_path_ = path;
  return StartListening(r, backlog);
}

int Listener::ChmodPipe(bool readable_all, bool writable_all) {
  if (!listening_ || !pipe_ || !server_) return UV_EBADF;
  int flags = (readable_all ? UV_READABLE : 0) | (writable_all ? UV_WRITABLE : 0);
  return uv_pipe_chmod(&server_->pipe, flags);
}

bool Listener::Reopen() {
  if (listening_ || released_) return false;
  // As net.Server: a closed server may listen again, even while the
  // connections of its earlier life are still finishing (they keep their
  // Connection: close). The close that was pending is not reported then
  // (node emits 'close' only once no handle and no connection is left).
  closing_ = false;
  server_closed_reported_ = false;
  return true;
}

int Listener::NewServerHandle(bool pipe, int tcp_family) {
  server_ = new ServerHandle;
  int r = pipe ? uv_pipe_init(loop_, &server_->pipe, 0)
               : uv_tcp_init_ex(loop_, &server_->tcp, tcp_family);
  if (r != 0) {
    delete server_;
    server_ = nullptr;
    return r;
  }
  pipe_ = pipe;
  uv_handle_t* h = reinterpret_cast<uv_handle_t*>(server_);
  h->data = this;
  open_handles_++;
  if (!ref_) uv_unref(h);
  return 0;
}

// After the bind (bind_result: 0 or its error): listen, or close the
// handle and return the error.
int Listener::StartListening(int bind_result, int backlog) {
  int r = bind_result != 0
              ? bind_result
              : uv_listen(reinterpret_cast<uv_stream_t*>(server_), backlog, OnConnection);
  if (r != 0) {
    // A later listen() starts over with a fresh handle, as node allows.
    pipe_path_.clear();
    CloseServerHandle();
    return r;
  }
  listening_ = true;
  uv_timer_start(&sweep_, OnSweep, SweepInterval(), SweepInterval());
  uv_check_start(&check_, OnCheck);
  return 0;
}

void Listener::SetRef(bool ref) {
  ref_ = ref;
  if (server_ == nullptr) return;
  uv_handle_t* h = reinterpret_cast<uv_handle_t*>(server_);
  if (ref) uv_ref(h);
  else uv_unref(h);
}

int Listener::GetAddress(std::string* ip, int* port, int* family) const {
  if (!listening_ || !server_) return UV_EBADF;
  if (pipe_) return UV_ENOTSUP;  // pipe_path() is its address
  return GetTcpAddress(&server_->tcp, AddressKind::kLocal, ip, port, family);
}

void Listener::OnConnection(uv_stream_t* server, int status) {
  Listener* l = static_cast<Listener*>(server->data);
  if (status < 0 || l->closing_) return;
  if (l->connections_.size() >= l->options_.max_connections) {
    // maxConnections: accept and close at once, as node does (leaving it
    // in the backlog would wake this callback again and again). No byte is
    // read or written; the handle is freed in its close callback.
    DroppedSocket* dropped = new DroppedSocket;
    if (l->pipe_) uv_pipe_init(l->loop_, &dropped->h.pipe, 0);
    else uv_tcp_init(l->loop_, &dropped->h.tcp);
    uv_handle_t* t = reinterpret_cast<uv_handle_t*>(&dropped->h);
    t->data = dropped;
    bool accepted = uv_accept(server, reinterpret_cast<uv_stream_t*>(t)) == 0;
    ServerDelegate::DroppedConnection d{};
    std::string lip, rip;
    if (accepted) {
      l->dropped_++;
      if (!l->pipe_) {  // a Unix socket's ends have no addresses
        GetTcpAddress(&dropped->h.tcp, AddressKind::kLocal, &lip, &d.local_port,
                      &d.local_family);
        GetTcpAddress(&dropped->h.tcp, AddressKind::kPeer, &rip, &d.remote_port,
                      &d.remote_family);
      }
      d.local_ip = lip;
      d.remote_ip = rip;
    }
    uv_close(t, [](uv_handle_t* h) {
      delete static_cast<DroppedSocket*>(h->data);
    });
    if (accepted && !l->released_) {
      l->BeginDispatch();
      l->delegate_->OnConnectionDropped(d);
      l->EndDispatch();
    }
    return;
  }
  Connection* c = Connection::Accept(l, server);
  if (c != nullptr && l->options_.connection_events && !l->released_) {
    l->BeginDispatch();
    l->delegate_->OnConnection(c);
    l->EndDispatch();
  }
}

void Listener::AddConnection(Connection* c) {
  c->list_index = connections_.size();
  connections_.push_back(c);
  metrics_.connections_accepted++;
}

void Listener::RemoveConnection(Connection* c) {
  size_t i = c->list_index;
  if (i < connections_.size() && connections_[i] == c) {
    connections_[i] = connections_.back();
    connections_[i]->list_index = i;
    connections_.pop_back();
    metrics_.closed_bytes_in += c->bytes_read();
    metrics_.closed_bytes_out += c->writer().bytes_written();
  }
  auto drop = [c](std::vector<Connection*>& v) {
    v.erase(std::remove(v.begin(), v.end(), c), v.end());
  };
  drop(dirty_);
  drop(reparse_);
  drop(free_retired_);
}

void Listener::OnConnectionFreed() {
  MaybeFinishClose();
  MaybeDelete();
}

void Listener::BeginDispatch() {
  if (dispatch_depth_++ == 0 && !released_) delegate_->OnDispatchBegin();
}

void Listener::EndDispatch() {
  if (dispatch_depth_ == 1) {
    // The embedder closes its scopes first: queued microtasks and
    // nextTicks run and may write more, which this flush includes.
    if (!released_) delegate_->OnDispatchEnd();
    dispatch_depth_ = 0;
    FlushDirty();
    return;
  }
  dispatch_depth_--;
}

void Listener::MarkDirty(Connection* c) {
  if (c->dirty) return;
  c->dirty = true;
  dirty_.push_back(c);
  if (dispatch_depth_ == 0) ScheduleFlush();
}

void Listener::ScheduleFlush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  if (!uv_is_active(reinterpret_cast<uv_handle_t*>(&check_))) {
    uv_check_start(&check_, OnCheck);
  }
  uv_idle_start(&idle_, OnIdle);
}

void Listener::ScheduleReparse(Connection* c) {
  if (std::find(reparse_.begin(), reparse_.end(), c) == reparse_.end()) {
    reparse_.push_back(c);
  }
  ScheduleFlush();
}

void Listener::ScheduleFreeRetired(Connection* c) {
  if (std::find(free_retired_.begin(), free_retired_.end(), c) ==
      free_retired_.end()) {
    free_retired_.push_back(c);
  }
  ScheduleFlush();
}

void Listener::FlushDirty() {
  // Re-entered when a flush emits 'drain' and its handler writes more: the
  // outer loop picks those connections up.
  if (flushing_) return;
  flushing_ = true;
  std::vector<Connection*>& batch = flush_batch_;
  while (!dirty_.empty()) {
    batch.swap(dirty_);
    // Connections are freed only in close callbacks, never during this
    // loop, so the pointers stay valid even if a flush destroys one.
    for (size_t i = 0; i < batch.size(); i++) {
      Connection* c = batch[i];
      c->dirty = false;
      c->Flush();
    }
    batch.clear();
  }
  flushing_ = false;
}

void Listener::OnIdle(uv_idle_t* h) {
  // Only here to make the poll phase non-blocking; OnCheck flushes and
  // stops it. (Stopping it here would be too early: idle handles run
  // before libuv computes the poll timeout, so poll would block.)
  (void)h;
}

void Listener::OnCheck(uv_check_t* h) {
  Listener* l = static_cast<Listener*>(h->data);
  l->flush_scheduled_ = false;
  uv_idle_stop(&l->idle_);
  if (!l->reparse_.empty()) {
    std::vector<Connection*> todo;
    todo.swap(l->reparse_);
    l->BeginDispatch();
    for (size_t i = 0; i < todo.size(); i++) {
      // A reparse may close other connections; RemoveConnection drops them
      // from reparse_, not from this copy, so recheck membership.
      Connection* c = todo[i];
      if (std::find(l->connections_.begin(), l->connections_.end(), c) !=
          l->connections_.end()) {
        c->ReparseHeldInput();
      }
    }
    l->EndDispatch();
  }
  l->FlushDirty();
  if (!l->free_retired_.empty()) {
    // Last: the reparse and the flush above may have replaced sessions
    // too; they have all returned, so no retired session is on the stack.
    // A connection closed since is gone from the list (RemoveConnection).
    std::vector<Connection*> todo;
    todo.swap(l->free_retired_);
    for (Connection* c : todo) c->FreeRetiredSessions();
  }
  if (!l->listening_ && l->dirty_.empty() && l->free_retired_.empty()) {
    uv_check_stop(h);
  }
}

void Listener::OnSweep(uv_timer_t* t) {
  Listener* l = static_cast<Listener*>(t->data);
  uint64_t now = uv_now(l->loop_);
  l->BeginDispatch();
  // CheckDeadlines may close connections; closing only marks them (the
  // list changes in the close callback, later), so indices stay valid.
  for (size_t i = 0; i < l->connections_.size(); i++) {
    l->connections_[i]->CheckDeadlines(now);
  }
  l->EndDispatch();
}

void Listener::Close() {
  if (closing_) return;
  closing_ = true;
  // Before the socket goes: closing a listening socket resets every
  // connection still in its accept queue, clients that completed the
  // handshake and may have sent their request. With SO_REUSEPORT the kernel
  // queued them for this socket alone (the others in the group never see
  // them), so a rolling restart would reset requests. Take them now: each
  // is served as an in-flight connection of a closing server (one request,
  // Connection: close; Http1Session::OnServerClosing).
  if (listening_) AcceptQueued();
  listening_ = false;
  CloseServerHandle();
  for (size_t i = 0; i < connections_.size(); i++) {
    connections_[i]->session()->OnServerClosing();
  }
  MaybeFinishClose();
}

void Listener::AcceptQueued() {
  uv_os_fd_t fd;
  if (!server_ || uv_fileno(reinterpret_cast<uv_handle_t*>(server_), &fd) != 0) return;
  for (;;) {
    int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN: the queue is empty (or the socket failed)
    }
    if (connections_.size() >= options_.max_connections) {
      // maxConnections: closed as OnConnection would (no 'drop' event:
      // the server is going away).
      close(c);
      dropped_++;
      continue;
    }
    Connection::Adopt(this, c);
  }
}

void Listener::CloseAllConnections() {
  for (size_t i = 0; i < connections_.size(); i++) connections_[i]->Destroy();
}

void Listener::CloseIdleConnections() {
  for (size_t i = 0; i < connections_.size(); i++) {
    Connection* c = connections_[i];
    if (c->session()->IsIdle()) c->Destroy();
  }
}

void Listener::MaybeFinishClose() {
  if (!closing_ || server_closed_reported_ || !connections_.empty()) return;
  server_closed_reported_ = true;
  uv_timer_stop(&sweep_);
  if (!released_) {
    BeginDispatch();
    delegate_->OnServerClosed();
    EndDispatch();
  }
}

void Listener::Release() {
  released_ = true;
  delegate_ = &g_released_delegate;
  if (!closing_) Close();
  CloseAllConnections();
  if (open_handles_ > 0 && !uv_is_closing(reinterpret_cast<uv_handle_t*>(&check_))) {
    uv_close(reinterpret_cast<uv_handle_t*>(&check_), OnHandleClosed);
    uv_close(reinterpret_cast<uv_handle_t*>(&idle_), OnHandleClosed);
    uv_close(reinterpret_cast<uv_handle_t*>(&sweep_), OnHandleClosed);
  }
  MaybeDelete();
}

void Listener::CloseServerHandle() {
  if (!server_) return;
  uv_close(reinterpret_cast<uv_handle_t*>(server_), [](uv_handle_t* h) {
    Listener* l = static_cast<Listener*>(h->data);
    delete reinterpret_cast<ServerHandle*>(h);
    l->open_handles_--;
    l->MaybeDelete();
  });
  server_ = nullptr;
}

void Listener::OnHandleClosed(uv_handle_t* h) {
  Listener* l = static_cast<Listener*>(h->data);
  l->open_handles_--;
  l->MaybeDelete();
}

void Listener::MaybeDelete() {
  if (released_ && open_handles_ == 0 && connections_.empty()) delete this;
}

}  // namespace sluice
