// A C++ client of an a2a-grpc server (or any A2A 1.0 gRPC server), with stubs
// generated from the proto files `a2a-grpc proto --out DIR` writes. It sends
// a message, streams one, gets the task back and asks for one that does not
// exist, checking each answer; it exits 1 at the first one that is wrong.
//
//   make PROTOS=DIR && ./client 127.0.0.1:50051
//
// See docs/languages/cpp.md.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "a2a.grpc.pb.h"

namespace a2a = lf::a2a::v1;

namespace {

[[noreturn]] void Fail(const std::string& what) {
  std::cerr << "FAILED: " << what << std::endl;
  std::exit(1);
}

// Every call names the protocol version it speaks (A2A-Version, spec 3.6).
std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->AddMetadata("a2a-version", "1.0");
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

a2a::SendMessageRequest Request(const std::string& text) {
  static int counter = 0;
  a2a::SendMessageRequest request;
  a2a::Message* message = request.mutable_message();
  message->set_message_id("cpp-" + std::to_string(std::time(nullptr)) + "-" +
                          std::to_string(++counter));
  message->set_role(a2a::ROLE_USER);
  message->add_parts()->set_text(text);
  return request;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) Fail("usage: client HOST:PORT");
  auto channel = grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  auto stub = a2a::A2AService::NewStub(channel);

  a2a::SendMessageResponse sent;
  grpc::Status status = stub->SendMessage(Context().get(), Request("hello from c++"), &sent);
  if (!status.ok()) Fail("SendMessage: " + status.error_message());
  if (!sent.has_task() || sent.task().status().state() != a2a::TASK_STATE_COMPLETED)
    Fail("SendMessage: expected a completed task, got " + sent.DebugString());
  const a2a::Task& task = sent.task();
  std::cout << "send " << a2a::TaskState_Name(task.status().state()) << " "
            << task.artifacts(0).parts(0).text() << "\n";

  auto context = Context();
  auto stream = stub->SendStreamingMessage(context.get(), Request("stream 2"));
  a2a::StreamResponse event;
  std::cout << "stream";
  while (stream->Read(&event)) {
    switch (event.payload_case()) {
      case a2a::StreamResponse::kTask: std::cout << " task"; break;
      case a2a::StreamResponse::kStatusUpdate:
        std::cout << " " << a2a::TaskState_Name(event.status_update().status().state());
        break;
      case a2a::StreamResponse::kArtifactUpdate: std::cout << " artifact"; break;
      case a2a::StreamResponse::kMessage: std::cout << " message"; break;
      default: break;
    }
  }
  std::cout << "\n";
  status = stream->Finish();
  if (!status.ok()) Fail("SendStreamingMessage: " + status.error_message());

  a2a::GetTaskRequest get;
  get.set_id(task.id());
  a2a::Task got;
  status = stub->GetTask(Context().get(), get, &got);
  if (!status.ok()) Fail("GetTask: " + status.error_message());
  if (got.id() != task.id()) Fail("GetTask: asked for " + task.id() + ", got " + got.id());
  std::cout << "get " << a2a::TaskState_Name(got.status().state()) << "\n";

  get.set_id("no-such-task");
  status = stub->GetTask(Context().get(), get, &got);
  if (status.error_code() != grpc::StatusCode::NOT_FOUND)
    Fail("GetTask of an unknown id: expected NOT_FOUND, got " + status.error_message());
  std::cout << "unknown NotFound\n";
  return 0;
}
