package extension

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestStrictDecodeRefusals(t *testing.T) {
	cases := []struct {
		name, doc string
		target    func() any
		path      string
	}{
		{"unknown member", `{"streamId":"a","x":1}`, func() any { return &StreamCancelParams{} }, "/x"},
		{"member name case differs", `{"StreamId":"a"}`, func() any { return &StreamCancelParams{} }, "/StreamId"},
		{"trailing JSON", `{"streamId":"a"} {}`, func() any { return &StreamCancelParams{} }, ""},
		{"required missing", `{}`, func() any { return &StreamCancelParams{} }, "/streamId"},
		{"required null", `{"streamId":null}`, func() any { return &StreamCancelParams{} }, "/streamId"},
		{"nonempty blank", `{"streamId":"  "}`, func() any { return &StreamCancelParams{} }, "/streamId"},
		{"min", `{"timeoutMillis":-1}`, func() any { return &ShutdownParams{} }, "/timeoutMillis"},
		{"max", `{"tabId":"t","waitUntil":"load","timeoutMillis":30001}`, func() any { return &BrowserTabWaitParams{} }, "/timeoutMillis"},
		{"min on pointer", `{"tabId":"t","maxChars":0}`, func() any { return &BrowserTabSnapshotParams{} }, "/maxChars"},
		{"closed enum", `{"event":"input.sent","payload":{}}`, func() any { return &EventParams{} }, "/event"},
		{"closed enum in array", `{"messages":[{"role":"robot"}],"tools":[],"maxTokens":1}`, func() any { return &ProviderRequest{} }, "/messages/0/role"},
		{"nested unknown member", `{"protocolVersion":"2","protocolId":"p","manifest":{},"session":{"sessionId":"s","workspaceRoot":"/w","generation":1,"extra":1},"capabilities":{"contentRefs":true,"uiHost":"tui","protocolVersion":"2"}}`, func() any { return &InitializeParams{} }, "/session/extra"},
		{"nested required missing", `{"protocolVersion":"2","protocolId":"p","manifest":{},"session":{"sessionId":"s","workspaceRoot":"/w"},"capabilities":{"contentRefs":true,"uiHost":"tui","protocolVersion":"2"}}`, func() any { return &InitializeParams{} }, "/session/generation"},
		{"sha256 shape", `{"jsonPointer":"/payload","contentRef":"c","totalBytes":1,"sha256":"abc"}`, func() any { return &ExternalizedField{} }, "/sha256"},
		{"null array item", `{"paths":["a",null]}`, func() any { return &ResourcesChangedParams{} }, "/paths/1"},
		{"not an object", `[]`, func() any { return &StreamCancelParams{} }, ""},
		{"integer from float", `{"timeoutMillis":1.5}`, func() any { return &ShutdownParams{} }, ""},
		{"negative unsigned", `{"event":"input.receive","seq":-1,"payload":{},"timeoutMillis":0}`, func() any { return &InterceptParams{} }, ""},
		{"seq zero", `{"event":"input.receive","seq":0,"payload":{},"timeoutMillis":0}`, func() any { return &InterceptParams{} }, "/seq"},
		{"externalizable payload still required", `{"event":"input.receive","seq":1,"timeoutMillis":0}`, func() any { return &InterceptParams{} }, "/payload"},
		{"null map value", `{"actionId":"a","sessionId":"s","generation":1,"args":{"k":null}}`, func() any { return &UIActionParams{} }, "/args/k"},
	}
	for _, c := range cases {
		err := strictDecode(json.RawMessage(c.doc), c.target())
		var de *DecodeError
		if !errors.As(err, &de) {
			t.Fatalf("%s: accepted (%v)", c.name, err)
		}
		if c.path != "" && de.Path != c.path {
			t.Fatalf("%s: path %q, want %q (%v)", c.name, de.Path, c.path, err)
		}
	}
}

func TestStrictDecodeAcceptances(t *testing.T) {
	var empty ProviderCatalogParams
	if err := strictDecode(nil, &empty); err != nil {
		t.Fatalf("missing params must decode as {}: %v", err)
	}
	var ip InterceptParams
	if err := strictDecode(json.RawMessage(`{"event":"input.receive","seq":1,"payload":null,"timeoutMillis":0,"externalized":[{"jsonPointer":"/payload","contentRef":"c","totalBytes":2,"sha256":"`+strings.Repeat("ab", 32)+`"}]}`), &ip); err != nil {
		t.Fatalf("externalizable payload may be null: %v", err)
	}
	var tc ToolCallParams
	if err := strictDecode(json.RawMessage(`{"name":"t","arguments":null,"timeoutMillis":0}`), &tc); err != nil || string(tc.Arguments) != "null" {
		t.Fatalf("tool arguments may be null: %v %q", err, tc.Arguments)
	}
	var sp StreamOpenParams
	if err := strictDecode(json.RawMessage(`{"streamId":"es_1","providerRef":"plugin/p/x","model":null,"request":{"messages":[],"tools":[],"maxTokens":0},"seqBase":1}`), &sp); err != nil {
		t.Fatalf("optional null is treated as absent: %v", err)
	}
	var sub UISubmitParams
	if err := strictDecode(json.RawMessage(`{"surfaceId":"f","sessionId":"s","generation":0,"values":{"a":null,"b":[1,"x"]}}`), &sub); err != nil {
		t.Fatalf("any-valued maps accept any value: %v", err)
	}
}

func TestInvalidParamsThroughServe(t *testing.T) {
	h := startHost(t, testHandler{}, Options{
		Interceptors: map[string]InterceptorFunc{"*": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			return Block("no"), nil
		}},
		UI: UIHandler{Action: func(context.Context, string, map[string]string) error { return nil }},
	})
	h.handshake()
	bad := []struct {
		method string
		params any
	}{
		{MethodExtensionIntercept, map[string]any{"event": "input.sent", "seq": 1, "payload": map[string]any{}, "timeoutMillis": 0}},
		{MethodExtensionIntercept, map[string]any{"event": "input.receive", "seq": 1, "timeoutMillis": 0}},
		{MethodExtensionIntercept, map[string]any{"event": "input.receive", "seq": 1, "payload": 1, "timeoutMillis": -5}},
		{MethodExtensionIntercept, map[string]any{"event": "input.receive", "seq": 1, "payload": 1, "timeoutMillis": 0, "surprise": true}},
		{MethodExtensionUIAction, map[string]any{"actionId": "", "sessionId": "s", "generation": 1}},
		{MethodExtensionUIAction, map[string]any{"actionId": "a", "sessionId": "s"}},
	}
	for _, b := range bad {
		e := h.expectReason(h.call(b.method, b.params), CodeInvalidParams, ErrInvalidParams)
		if e.Message != frozenErrors[ErrInvalidParams].Message {
			t.Fatalf("message %q", e.Message)
		}
	}
	var r InterceptResult
	h.result(h.call(MethodExtensionIntercept, map[string]any{"event": "input.receive", "seq": 1, "payload": nil, "timeoutMillis": 0}), &r)
	if r.Decision != DecisionBlock || r.Reason != "no" {
		t.Fatalf("result %+v", r)
	}
}
