#include "core/observe/access_log.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
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

// Lines wait at most this long for the writer once queued: it collects
// them for a while instead of waking per line (a wake-up, a futex pair,
// cost about a tenth of a hello response), unless kWakeBytes pile up.
constexpr uint64_t kCollectNs = 20 * 1000 * 1000;
constexpr size_t kWakeBytes = 64 * 1024;

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
    // Something came: let more come (the loop signals again past
    // kWakeBytes, or when stopping).
    while (!s.stop && s.pending.size() < kWakeBytes &&
           uv_cond_timedwait(&s.cv, &s.mu, kCollectNs) == 0) {
    }
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
bool Plain(unsigned char c) { return c != '"' && c != '\\' && c >= 0x20 && c <= 0x7e; }

// Appends `v`, each run of plain bytes at once (a URL or a user-agent is
// mostly one run), the others through `escape`.
template <typename Escape>
void AppendRuns(std::string& out, std::string_view v, Escape escape) {
  size_t i = 0;
  while (i < v.size()) {
    size_t j = i;
    while (j < v.size() && Plain(static_cast<unsigned char>(v[j]))) j++;
    out.append(v.data() + i, j - i);
    if (j < v.size()) escape(static_cast<unsigned char>(v[j]));
    i = j + 1;
  }
}

void AppendEscaped(std::string& out, std::string_view v) {
  static const char kHex[] = "0123456789ABCDEF";
  AppendRuns(out, v, [&out](unsigned char c) {
    const char e[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
    out.append(e, 4);
  });
}

void AppendJsonString(std::string& out, std::string_view v) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  AppendRuns(out, v, [&out](unsigned char c) {
    if (c == '"' || c == '\\') {
      const char e[2] = {'\\', static_cast<char>(c)};
      out.append(e, 2);
    } else {
      // Bytes, not characters: every byte outside printable ASCII is
      // \u00XX, so the line stays valid JSON whatever the request held.
      const char e[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
      out.append(e, 6);
    }
  });
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

void AccessLogEntry::NoteHeader(std::string_view name, std::string_view value) {
  auto is = [name](std::string_view lower) {
    if (name.size() != lower.size()) return false;
    for (size_t i = 0; i < name.size(); i++) {
      char c = name[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
      if (c != lower[i]) return false;
    }
    return true;
  };
  if (is("referer")) referer = std::string(value);
  else if (is("user-agent")) user_agent = std::string(value);
}

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

namespace {

// One field of a line as each format writes it: text is escaped ("-" when
// empty) in `combined` and a JSON string in JSON; a word (time, protocol)
// is written as is, quoted in JSON; a number as is in both.
enum class Kind { kText, kWord, kNumber };
struct Part {
  std::string_view combined_before;  // nginx's punctuation before the field
  std::string_view json_name;
  Kind kind;
};
// nginx's combined: $remote_addr - $remote_user [$time_local] "$request"
// $status $body_bytes_sent "$http_referer" "$http_user_agent"; JSON lines
// name the same fields (and add duration_ms).
constexpr Part kParts[] = {
    {"", "remote_addr", Kind::kText},     {" - - [", "time", Kind::kWord},
    {"] \"", "method", Kind::kText},      {" ", "url", Kind::kText},
    {" ", "protocol", Kind::kWord},       {"\" ", "status", Kind::kNumber},
    {" ", "body_bytes", Kind::kNumber},   {" \"", "referer", Kind::kText},
    {"\" \"", "user_agent", Kind::kText},
};
constexpr size_t kPartCount = sizeof(kParts) / sizeof(kParts[0]);

}  // namespace

void AccessLog::Write(const AccessLogEntry& e, int status, double duration_s) {
  const bool json = format_ == kJson;
  char status_buf[24];
  char bytes_buf[24];
  const std::string_view status_text(
      status_buf, std::to_chars(status_buf, status_buf + sizeof(status_buf), status).ptr - status_buf);
  const std::string_view bytes_text(
      bytes_buf, std::to_chars(bytes_buf, bytes_buf + sizeof(bytes_buf), e.body_bytes).ptr - bytes_buf);
  const std::string_view values[kPartCount] = {
      e.remote_addr, TimeText(json), e.method, e.url, e.protocol,
      status_text,   bytes_text,     e.referer, e.user_agent};
  std::string& l = line_;
  l.clear();
  for (size_t i = 0; i < kPartCount; i++) {
    const Part& p = kParts[i];
    const std::string_view v = values[i];
    if (!json) {
      l += p.combined_before;
      if (p.kind != Kind::kText) l += v;
      else if (v.empty()) l += '-';
      else AppendEscaped(l, v);
      continue;
    }
    l += i == 0 ? "{\"" : ",\"";
    l += p.json_name;
    l += "\":";
    if (p.kind == Kind::kText) {
      AppendJsonString(l, v);
    } else if (p.kind == Kind::kWord) {
      l += '"';
      l += v;
      l += '"';
    } else {
      l += v;
    }
  }
  if (json) {
    char ms[32];
    snprintf(ms, sizeof(ms), "%.3f", duration_s * 1000);
    l += ",\"duration_ms\":";
    l += ms;
    l += "}\n";
  } else {
    l += "\"\n";
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
  const bool wake = s.pending.size() < kWakeBytes && s.pending.size() + line.size() >= kWakeBytes;
  s.pending += line;
  s.pending_lines++;
  if (was_empty || wake) uv_cond_signal(&s.cv);
  uv_mutex_unlock(&s.mu);
}

}  // namespace sluice
