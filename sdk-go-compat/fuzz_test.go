package extension

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Hostile input must never panic the frame parser or the strict decoder,
// and whatever the parser accepts must be a well-formed frame. `go test`
// runs the seeds; `go test -fuzz FuzzParseFrame` explores further.

func FuzzParseFrame(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"extension/initialize","params":{}}`,
		`{"jsonrpc":"2.0","method":"extension/initialized"}`,
		`{"jsonrpc":"2.0","id":-7,"result":{"accepted":true}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"m","data":{"reason":"internal","retryable":true}}}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"x"}`, `[]`, `null`, `{"id":{}}`, "\x00", `{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fr, rejection := parseFrame(line)
		if (fr == nil) == (rejection == nil) {
			t.Fatalf("exactly one of frame and rejection: %q", line)
		}
		if rejection != nil {
			if !validID(rejection.id) || (rejection.code != CodeParseError && rejection.code != CodeInvalidRequest) {
				t.Fatalf("bad rejection %+v for %q", rejection, line)
			}
			return
		}
		switch fr.kind {
		case frameRequest, frameNotification:
			if fr.method == "" || (fr.params != nil && !isObject(fr.params)) {
				t.Fatalf("accepted a bad request %q", line)
			}
			if fr.kind == frameRequest && !validID(fr.id) {
				t.Fatalf("accepted a bad id %q", line)
			}
		case frameResponse:
			if !validID(fr.id) || (fr.result == nil) == (fr.err == nil) {
				t.Fatalf("accepted a bad response %q", line)
			}
		}
	})
}

func FuzzStrictDecode(f *testing.F) {
	for _, seed := range []string{
		`{"protocolVersion":"2","protocolId":"p","manifest":{},"session":{"sessionId":"s","workspaceRoot":"/w","generation":1},"capabilities":{"contentRefs":true,"uiHost":"tui","protocolVersion":"2"}}`,
		`{"event":"input.receive","seq":1,"payload":null,"timeoutMillis":0,"externalized":[{"jsonPointer":"/payload","contentRef":"c","totalBytes":1,"sha256":"` + string(bytes.Repeat([]byte("a"), 64)) + `"}]}`,
		`{"streamId":"s","providerRef":"r","request":{"messages":[{"role":"user","tool_calls":[{"id":"1","name":"n","arguments":""}]}],"tools":[],"maxTokens":1},"seqBase":1}`,
		`{}`, ``, `[`, `{"a":1} x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		targets := []func() any{
			func() any { return &InitializeParams{} },
			func() any { return &InterceptParams{} },
			func() any { return &StreamOpenParams{} },
		}
		for _, fresh := range targets {
			target := fresh()
			if strictDecode(doc, target) != nil {
				continue
			}
			// What was accepted, re-encoded, is accepted again.
			again, err := json.Marshal(target)
			if err != nil {
				t.Fatalf("accepted %q but cannot re-encode: %v", doc, err)
			}
			if err := strictDecode(again, fresh()); err != nil {
				t.Fatalf("accepted %q, refused its re-encoding %s: %v", doc, again, err)
			}
		}
	})
}
