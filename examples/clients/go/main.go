// A Go client of an a2a-grpc server (or any A2A 1.0 gRPC server), with stubs
// generated from the proto files `a2a-grpc proto --out DIR` writes. It sends
// a message, streams one, gets the task back and asks for one that does not
// exist, checking each answer; it exits 1 at the first one that is wrong.
//
//	go run . 127.0.0.1:50051
//
// See docs/languages/go.md for generating the stubs.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	a2a "google.golang.org/lf/a2a/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "FAILED: "+format+"\n", args...)
	os.Exit(1)
}

func message(text string) *a2a.Message {
	return &a2a.Message{
		MessageId: fmt.Sprintf("go-%d", time.Now().UnixNano()),
		Role:      a2a.Role_ROLE_USER,
		Parts:     []*a2a.Part{{Content: &a2a.Part_Text{Text: text}}},
	}
}

func main() {
	if len(os.Args) != 2 {
		fail("usage: client HOST:PORT")
	}
	// Plain text to a local server. WithInsecure is in every grpc-go from Debian's
	// 1.33 on; newer code may write grpc.WithTransportCredentials(insecure.NewCredentials()).
	conn, err := grpc.Dial(os.Args[1], grpc.WithInsecure())
	if err != nil {
		fail("dial: %v", err)
	}
	defer conn.Close()
	client := a2a.NewA2AServiceClient(conn)
	// Every call names the protocol version it speaks (A2A-Version, spec 3.6).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "a2a-version", "1.0")

	sent, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: message("hello from go")})
	if err != nil {
		fail("SendMessage: %v", err)
	}
	task := sent.GetTask()
	if task == nil || task.GetStatus().GetState() != a2a.TaskState_TASK_STATE_COMPLETED {
		fail("SendMessage: expected a completed task, got %v", sent)
	}
	text := task.GetArtifacts()[0].GetParts()[0].GetText()
	fmt.Printf("send %s %s\n", task.GetStatus().GetState(), text)

	stream, err := client.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: message("stream 2")})
	if err != nil {
		fail("SendStreamingMessage: %v", err)
	}
	var kinds []string
	for {
		event, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			fail("SendStreamingMessage: %v", err)
		}
		switch payload := event.GetPayload().(type) {
		case *a2a.StreamResponse_Task:
			kinds = append(kinds, "task")
		case *a2a.StreamResponse_StatusUpdate:
			kinds = append(kinds, payload.StatusUpdate.GetStatus().GetState().String())
		case *a2a.StreamResponse_ArtifactUpdate:
			kinds = append(kinds, "artifact")
		case *a2a.StreamResponse_Message:
			kinds = append(kinds, "message")
		}
	}
	fmt.Printf("stream %s\n", strings.Join(kinds, " "))

	got, err := client.GetTask(ctx, &a2a.GetTaskRequest{Id: task.GetId()})
	if err != nil {
		fail("GetTask: %v", err)
	}
	if got.GetId() != task.GetId() {
		fail("GetTask: asked for %s, got %s", task.GetId(), got.GetId())
	}
	fmt.Printf("get %s\n", got.GetStatus().GetState())

	_, err = client.GetTask(ctx, &a2a.GetTaskRequest{Id: "no-such-task"})
	if status.Code(err) != codes.NotFound {
		fail("GetTask of an unknown id: expected NotFound, got %v", err)
	}
	fmt.Printf("unknown %s\n", status.Code(err))
}
