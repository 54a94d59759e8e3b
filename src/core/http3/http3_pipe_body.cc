#include "core/http3/http3_pipe_body.h"

#include "core/http3/http3_session.h"

namespace sluice {

Http3PipeBody::Http3PipeBody(Http3Session* session, uint64_t id, PipeSource* source,
                             PipeBodyListener* listener)
    : session_(session), id_(id), pipe_(new Pipe(source, this)), listener_(listener) {}

void Http3PipeBody::Destroy() {
  pipe_->Destroy();
  delete this;
}

void Http3PipeBody::OnPipeReadable() { session_->WakeBody(id_); }

void Http3PipeBody::OnPipeError(int err) {
  (void)err;  // Pull reports it again, inside the pass
  session_->WakeBody(id_);
}

}  // namespace sluice
