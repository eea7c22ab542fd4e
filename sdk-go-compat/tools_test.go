package extension

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func toolOptions() Options {
	return Options{Tools: map[string]ToolFunc{
		"echo": func(_ context.Context, args json.RawMessage) (*ToolCallResult, error) {
			return ToolText("args=" + string(args)), nil
		},
		"fail": func(context.Context, json.RawMessage) (*ToolCallResult, error) {
			return nil, errors.New("the glossary file is missing")
		},
		"refuse": func(context.Context, json.RawMessage) (*ToolCallResult, error) {
			return nil, &ProtocolError{Reason: ErrCapabilityNotDeclared}
		},
		"quiet": func(context.Context, json.RawMessage) (*ToolCallResult, error) { return nil, nil },
		"self-error": func(context.Context, json.RawMessage) (*ToolCallResult, error) {
			return ToolError("bad input"), nil
		},
		"deadline": func(ctx context.Context, _ json.RawMessage) (*ToolCallResult, error) {
			if _, ok := ctx.Deadline(); !ok {
				return ToolText("no deadline"), nil
			}
			return ToolText("deadline set"), nil
		},
		"panics": func(context.Context, json.RawMessage) (*ToolCallResult, error) { panic("tool bug") },
	}}
}

func toolCall(name string, args any, timeout int) map[string]any {
	return map[string]any{"name": name, "arguments": args, "timeoutMillis": timeout}
}

func TestToolsAreDeclaredAndServed(t *testing.T) {
	h := startHost(t, testHandler{}, toolOptions())
	r := h.handshake()
	want := []string{"deadline", "echo", "fail", "panics", "quiet", "refuse", "self-error"}
	if len(r.Tools) != len(want) {
		t.Fatalf("tools %v", r.Tools)
	}
	for i := range want {
		if r.Tools[i] != want[i] {
			t.Fatalf("tools %v", r.Tools)
		}
	}
	check := func(params map[string]any, content string, isError bool) {
		t.Helper()
		m := h.call(MethodExtensionToolCall, params)
		var res ToolCallResult
		h.result(m, &res)
		if res.Content != content || res.IsError != isError {
			t.Fatalf("%v: %s", params, m.raw)
		}
	}
	check(toolCall("echo", map[string]any{"q": "x"}, 0), `args={"q":"x"}`, false)
	check(toolCall("echo", nil, 0), "args=null", false)
	check(toolCall("fail", map[string]any{}, 0), "the glossary file is missing", true)
	check(toolCall("self-error", map[string]any{}, 0), "bad input", true)
	check(toolCall("quiet", map[string]any{}, 0), "", false)
	check(toolCall("deadline", map[string]any{}, 1000), "deadline set", false)
	check(toolCall("deadline", map[string]any{}, 0), "no deadline", false)
	// content is required on the wire even when empty
	m := h.call(MethodExtensionToolCall, toolCall("quiet", map[string]any{}, 0))
	if string(m.fields["result"]) != `{"content":""}` {
		t.Fatalf("%s", m.raw)
	}
	h.expectReason(h.call(MethodExtensionToolCall, toolCall("refuse", map[string]any{}, 0)), DomainErrorCode, ErrCapabilityNotDeclared)
	h.expectReason(h.call(MethodExtensionToolCall, toolCall("panics", map[string]any{}, 0)), CodeInternal, ErrInternal)
}

func TestToolCallConventions(t *testing.T) {
	h := startHost(t, testHandler{}, toolOptions())
	h.handshake()
	h.expectReason(h.call(MethodExtensionToolCall, toolCall("nope", map[string]any{}, 0)), CodeMethodNotFound, ErrUnknownMethod)
	h.expectReason(h.call(MethodExtensionToolCall, map[string]any{"name": "echo", "timeoutMillis": 0}), CodeInvalidParams, ErrInvalidParams)
	h.expectReason(h.call(MethodExtensionToolCall, map[string]any{"arguments": map[string]any{}, "timeoutMillis": 0}), CodeInvalidParams, ErrInvalidParams)
	h.expectReason(h.call(MethodExtensionToolCall, toolCall("", map[string]any{}, 0)), CodeInvalidParams, ErrInvalidParams)
	h.expectReason(h.call(MethodExtensionToolCall, toolCall("echo", map[string]any{}, -1)), CodeInvalidParams, ErrInvalidParams)
	h.expectReason(h.call(MethodExtensionToolCall, map[string]any{"name": "echo", "arguments": 1}), CodeInvalidParams, ErrInvalidParams)
}

func TestExplicitToolListIsKept(t *testing.T) {
	h := startHost(t, testHandler{init: func(context.Context, InitializeParams) (*InitializeResult, error) {
		return &InitializeResult{Name: "n", Version: "1", Tools: []string{"echo"}}, nil
	}}, toolOptions())
	r := h.handshake()
	if len(r.Tools) != 1 || r.Tools[0] != "echo" {
		t.Fatalf("%v", r.Tools)
	}
}

func TestManifestToolsAreAccepted(t *testing.T) {
	got := make(chan []string, 1)
	h := startHost(t, testHandler{init: func(_ context.Context, p InitializeParams) (*InitializeResult, error) {
		got <- p.Manifest.Tools
		return &InitializeResult{Name: "n", Version: "1"}, nil
	}}, Options{})
	p := initParams()
	p["manifest"] = map[string]any{"tools": []string{"lookup"}, "capabilities": []string{"tools"}}
	var r InitializeResult
	h.result(h.call(MethodExtensionInitialize, p), &r)
	if tools := <-got; len(tools) != 1 || tools[0] != "lookup" {
		t.Fatalf("%v", tools)
	}
}
