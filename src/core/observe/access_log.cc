#include "core/observe/access_log.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <ctime>

namespace sluice {

struct AccessLog::State {
  State() {
    uv_mutex_init(&mu);
    uv_cond_init(&cv);
  }
  ~State() {
    if (fd >= 0) close(fd);
    uv_cond_destroy(&cv);
    uv_mutex_destroy(&mu);
  }
  uv_mutex_t mu;
  uv_cond_t cv;
  std::string pending;       // guarded by mu
  uint64_t pending_lines = 0;  // guarded by mu
  size_t capacity = 0;
  bool stop = false;         // guarded by mu
  int fd = -1;
  std::atomic<uint64_t> written{0};
  std::atomic<uint64_t> dropped{0};
};

namespace {

// The writer thread: takes what is queued, writes it with the lock
// released (a write may block on a stalled disk; the loop only ever waits
// for the lock, held for a swap), until stopped with nothing left. Owns
// one reference to the state (`arg`), dropped on exit.
void WriterMain(void* arg) {
  std::unique_ptr<std::shared_ptr<AccessLog::State>> holder(
      static_cast<std::shared_ptr<AccessLog::State>*>(arg));
  AccessLog::State& s = **holder;
  std::string batch;
  for (;;) {
    uint64_t lines;
    uv_mutex_lock(&s.mu);
    while (s.pending.empty() && !s.stop) uv_cond_wait(&s.cv, &s.mu);
    if (s.pending.empty()) {
      uv_mutex_unlock(&s.mu);
      return;
    }
    batch.clear();
    batch.swap(s.pending);
    lines = s.pending_lines;
    s.pending_lines = 0;
    uv_mutex_unlock(&s.mu);
    size_t off = 0;
    while (off < batch.size()) {
      ssize_t n = write(s.fd, batch.data() + off, batch.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        break;  // a write error loses the batch (counted as dropped)
      }
      off += static_cast<size_t>(n);
    }
    if (off == batch.size()) s.written += lines;
    else s.dropped += lines;
  }
}

// nginx's escaping of a logged variable: '"', '\\' and bytes outside
// printable ASCII as \xHH.
void AppendEscaped(std::string& out, std::string_view v) {
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : v) {
    if (c == '"' || c == '\\' || c < 0x20 || c > 0x7e) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
}

void AppendJsonString(std::string& out, std::string_view v) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c > 0x7e) {
      // Bytes, not characters: every byte outside printable ASCII is
      // \u00XX, so the line stays valid JSON whatever the request held.
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
}

}  // namespace

std::unique_ptr<AccessLog> AccessLog::Open(const std::string& path, Format format,
                                           size_t capacity, int* err) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    *err = -errno;
    return nullptr;
  }
  auto state = std::make_shared<State>();
  state->fd = fd;
  state->capacity = capacity;
  auto* holder = new std::shared_ptr<State>(state);
  uv_thread_t thread;
  int r = uv_thread_create(&thread, WriterMain, holder);
  if (r != 0) {
    delete holder;
    *err = r;
    return nullptr;
  }
  // The thread ends by itself once stopped (~AccessLog); nobody joins it.
  pthread_detach(thread);
  *err = 0;
  return std::unique_ptr<AccessLog>(new AccessLog(std::move(state), format));
}

AccessLog::AccessLog(std::shared_ptr<State> state, Format format)
    : state_(std::move(state)), format_(format) {}

AccessLog::~AccessLog() {
  uv_mutex_lock(&state_->mu);
  state_->stop = true;
  uv_cond_signal(&state_->cv);
  uv_mutex_unlock(&state_->mu);
}

uint64_t AccessLog::lines_written() const { return state_->written; }

uint64_t AccessLog::lines_dropped() const { return state_->dropped; }

const std::string& AccessLog::TimeText(bool iso) {
  time_t now = time(nullptr);
  if (now != time_second_) {
    time_second_ = now;
    struct tm local;
    struct tm utc;
    localtime_r(&now, &local);
    gmtime_r(&now, &utc);
    char buf[64];
    strftime(buf, sizeof(buf), "%d/%b/%Y:%H:%M:%S %z", &local);
    time_combined_ = buf;
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
    time_iso_ = buf;
  }
  return iso ? time_iso_ : time_combined_;
}

void AccessLog::Write(const AccessLogEntry& e, int status, double duration_s) {
  std::string& l = line_;
  l.clear();
  if (format_ == kCombined) {
    // nginx: $remote_addr - $remote_user [$time_local] "$request" $status
    // $body_bytes_sent "$http_referer" "$http_user_agent"
    l += e.remote_addr.empty() ? "-" : e.remote_addr;
    l += " - - [";
    l += TimeText(false);
    l += "] \"";
    AppendEscaped(l, e.method);
    l += ' ';
    AppendEscaped(l, e.url);
    l += ' ';
    l += e.protocol;
    l += "\" ";
    l += std::to_string(status);
    l += ' ';
    l += std::to_string(e.body_bytes);
    l += " \"";
    if (e.referer.empty()) l += '-';
    else AppendEscaped(l, e.referer);
    l += "\" \"";
    if (e.user_agent.empty()) l += '-';
    else AppendEscaped(l, e.user_agent);
    l += "\"\n";
  } else {
    char ms[32];
    snprintf(ms, sizeof(ms), "%.3f", duration_s * 1000);
    l += "{\"time\":\"";
    l += TimeText(true);
    l += "\",\"remote_addr\":";
    AppendJsonString(l, e.remote_addr);
    l += ",\"method\":";
    AppendJsonString(l, e.method);
    l += ",\"url\":";
    AppendJsonString(l, e.url);
    l += ",\"protocol\":\"";
    l += e.protocol;
    l += "\",\"status\":";
    l += std::to_string(status);
    l += ",\"body_bytes\":";
    l += std::to_string(e.body_bytes);
    l += ",\"referer\":";
    AppendJsonString(l, e.referer);
    l += ",\"user_agent\":";
    AppendJsonString(l, e.user_agent);
    l += ",\"duration_ms\":";
    l += ms;
    l += "}\n";
  }
  Append(l);
}

void AccessLog::Append(std::string_view line) {
  State& s = *state_;
  uv_mutex_lock(&s.mu);
  if (s.pending.size() + line.size() > s.capacity) {
    uv_mutex_unlock(&s.mu);
    s.dropped++;
    return;
  }
  const bool was_empty = s.pending.empty();
  s.pending += line;
  s.pending_lines++;
  if (was_empty) uv_cond_signal(&s.cv);
  uv_mutex_unlock(&s.mu);
}

}  // namespace sluice
