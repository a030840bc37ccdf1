package messages_test

import (
	"errors"
	"fmt"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func ExampleDecode() {
	data := []byte(`{"v":1,"request_id":"r-1","session_id":"sess.1","agent_id":"pod-1","tool":"bash"}`)
	_, err := messages.Decode[messages.Request](data, messages.DefaultMaxBytes)
	fmt.Println(err)
	reply := messages.ErrorReplyFor(err)
	fmt.Println(reply.Error.Code)
	// Output:
	// invalid request: field "session_id": must be a single subject token (no '.', '*', '>' or whitespace), got "sess.1"
	// invalid_request
}

func ExampleEncode() {
	data, err := messages.Encode(&messages.StatusRequest{RequestID: "r-1"})
	fmt.Println(string(data), err)
	// Output: {"v":1,"request_id":"r-1"} <nil>
}

func ExampleSubjects_Parse() {
	s, err := messages.NewSubjects("") // the default prefix, signoff.v1
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Decision("sess-1", "r-1"))
	ps, err := s.Parse("signoff.v1.decision.sess-1.r-1")
	fmt.Println(ps.Kind, ps.Session, ps.RequestID, err)
	_, err = s.SessionFromSubject(messages.SubjectReq, "signoff.v1.req.*")
	fmt.Println(err)
	// Output:
	// signoff.v1.decision.sess-1.r-1
	// decision sess-1 r-1 <nil>
	// invalid subject "signoff.v1.req.*": session_id "*": must be a single subject token (no '.', '*', '>' or whitespace)
}

func ExampleIsErrorReply() {
	reply := []byte(`{"v":1,"error":{"code":"not_found","message":"not found: request \"r-9\""}}`)
	if er, ok := messages.IsErrorReply(reply); ok {
		err := er.Err()
		fmt.Println(err)
		fmt.Println(errors.Is(err, messages.ErrNotFound))
	}
	// Output:
	// signoff: not_found: not found: request "r-9"
	// true
}

func ExampleLLMMessageSoftReject() {
	fmt.Printf("%q\n", messages.LLMMessageSoftReject("write", "Don't write that file"))
	// Output: "User rejected tool 'write'. Feedback: Don't write that file\n\n[System reminder: Ask the user what they would prefer instead before continuing.]"
}
