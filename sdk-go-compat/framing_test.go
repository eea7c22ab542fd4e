package extension

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCRLFAndBlankLinesAreAccepted(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": MethodExtensionInitialize, "params": initParams()})
	h.sendRaw("\r\n\n   \t\n" + string(b) + "\r\n\r\n")
	m := h.next()
	var r InitializeResult
	h.result(m, &r)
	if m.id() != "1" || r.Name != "test-ext" {
		t.Fatalf("unexpected answer %s", m.raw)
	}
}

func TestUnparsableFrameGetsParseError(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	h.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":01,\"method\":\"x\"}\n") // JSON has no leading zeros
	if e := h.next().errorObj(t); e.Code != CodeParseError {
		t.Fatalf("leading-zero id: code %d", e.Code)
	}
	h.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":1,\n")
	m := h.next()
	e := m.errorObj(t)
	if e.Code != CodeParseError || e.Message != "parse error" || e.Data != nil || m.id() != "null" {
		t.Fatalf("unexpected parse error answer %s", m.raw)
	}
	if _, hasData := mustErrorFields(t, m)["data"]; hasData {
		t.Fatalf("frame rejection must carry no data: %s", m.raw)
	}
	// The connection survives a rejected frame.
	h.handshake()
}

func mustErrorFields(t *testing.T, m wireMsg) map[string]json.RawMessage {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := m.decode("error", &fields); err != nil {
		t.Fatal(err)
	}
	return fields
}

func TestInvalidFrameShapes(t *testing.T) {
	cases := []struct {
		name   string
		line   string
		wantID string
	}{
		{"wrong jsonrpc keeps valid id", `{"jsonrpc":"1.0","id":5,"method":"extension/initialize"}`, "5"},
		{"missing jsonrpc", `{"id":6,"method":"extension/initialize"}`, "6"},
		{"string id", `{"jsonrpc":"2.0","id":"7","method":"extension/initialize"}`, "null"},
		{"float id", `{"jsonrpc":"2.0","id":1.0,"method":"extension/initialize"}`, "null"},
		{"negative zero-free id kept", `{"jsonrpc":"2.0","id":-3,"method":"x","params":7}`, "-3"},
		{"exponent id", `{"jsonrpc":"2.0","id":1e3,"method":"x"}`, "null"},
		{"id beyond int64", `{"jsonrpc":"2.0","id":99999999999999999999,"method":"x"}`, "null"},
		{"params array", `{"jsonrpc":"2.0","id":8,"method":"extension/initialize","params":[]}`, "8"},
		{"params null", `{"jsonrpc":"2.0","id":9,"method":"extension/initialize","params":null}`, "9"},
		{"empty method", `{"jsonrpc":"2.0","id":10,"method":""}`, "10"},
		{"method not a string", `{"jsonrpc":"2.0","id":11,"method":3}`, "11"},
		{"request with result", `{"jsonrpc":"2.0","id":12,"method":"x","result":{}}`, "12"},
		{"response with both", `{"jsonrpc":"2.0","id":13,"result":{},"error":{"code":1,"message":"m"}}`, "13"},
		{"response with neither", `{"jsonrpc":"2.0","id":14}`, "14"},
		{"response with params", `{"jsonrpc":"2.0","id":15,"result":{},"params":{}}`, "15"},
		{"error without message", `{"jsonrpc":"2.0","id":16,"error":{"code":1}}`, "16"},
		{"error with float code", `{"jsonrpc":"2.0","id":17,"error":{"code":1.5,"message":"m"}}`, "17"},
		{"top-level array", `[{"jsonrpc":"2.0","id":18,"method":"x"}]`, "null"},
		{"top-level string", `"hello"`, "null"},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, "null"},
	}
	h := startHost(t, testHandler{}, Options{})
	for _, c := range cases {
		h.sendRaw(c.line + "\n")
		m := h.next()
		e := m.errorObj(t)
		if e.Code != CodeInvalidRequest || e.Message != "invalid request" || e.Data != nil {
			t.Fatalf("%s: unexpected answer %s", c.name, m.raw)
		}
		if m.id() != c.wantID {
			t.Fatalf("%s: answer id %s, want %s", c.name, m.id(), c.wantID)
		}
	}
	// Unknown top-level members are tolerated.
	h.sendRaw(`{"jsonrpc":"2.0","id":40,"method":"extension/initialize","params":` + mustJSON(t, initParams()) + `,"extra":true}` + "\n")
	var r InitializeResult
	h.result(h.next(), &r)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A frame of exactly FrameBytes including its newline is read; one byte
// more gets a frame_too_large answer (id null) and ends the connection.
func TestInboundFrameLimitCountsTheNewline(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	build := func(total int) string {
		head := `{"jsonrpc":"2.0","id":1,"method":"extension/shutdown","params":{"pad":"`
		tail := `"}}`
		return head + strings.Repeat("a", total-len(head)-len(tail)-1) + tail + "\n"
	}
	atLimit := build(FrameBytes)
	if len(atLimit) != FrameBytes {
		t.Fatalf("test frame is %d bytes", len(atLimit))
	}
	h.sendRaw(atLimit)
	// Read and decoded: the unknown member is an invalid_params answer.
	h.expectReason(h.next(), CodeInvalidParams, ErrInvalidParams)

	h.sendRaw(build(FrameBytes + 1))
	m := h.next()
	h.expectReason(m, DomainErrorCode, ErrFrameTooLarge)
	if m.id() != "null" {
		t.Fatalf("frame_too_large answer id %s, want null", m.id())
	}
	err := h.wait()
	var tooLarge *FrameTooLargeError
	if !errors.As(err, &tooLarge) || tooLarge.Direction != "inbound" || tooLarge.Limit != FrameBytes || tooLarge.Size <= FrameBytes {
		t.Fatalf("Serve returned %v", err)
	}
}

func TestOversizedOutboundAnswerFailsOnlyThatMessage(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"input.receive": func(_ context.Context, _ string, payload json.RawMessage) (*InterceptResult, error) {
			var p struct{ Text string }
			_ = json.Unmarshal(payload, &p)
			if p.Text == "big" {
				return Replace(map[string]string{"text": strings.Repeat("x", FrameBytes)})
			}
			return Replace(map[string]string{"text": p.Text + "!"})
		},
	}})
	h.handshake()
	m := h.call(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "big"}))
	h.expectReason(m, DomainErrorCode, ErrFrameTooLarge)
	var r InterceptResult
	h.result(h.call(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "small"})), &r)
	if string(r.Replacement) != `{"text":"small!"}` {
		t.Fatalf("replacement %s", r.Replacement)
	}
}

func TestOutboundEncodingIsCompactWithoutHTMLEscaping(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"*": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			return Replace(json.RawMessage(`{"text":"<a&b>"}`))
		},
	}})
	h.handshake()
	id := h.request(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"}))
	m, _ := h.answerTo(id)
	want := `{"jsonrpc":"2.0","id":` + id + `,"result":{"decision":"replace","replacement":{"text":"<a&b>"}}}` + "\n"
	if string(m.raw) != want {
		t.Fatalf("frame\n%s\nwant\n%s", m.raw, want)
	}
}

func TestExtensionRequestIDsCountFromOne(t *testing.T) {
	published := make(chan error, 2)
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"*": func(ctx context.Context, _ string, _ json.RawMessage) (*InterceptResult, error) {
			for i := 0; i < 2; i++ {
				published <- HostUI{}.PublishStatus(ctx, "s1", 1, "status", UIStatusPayload{Label: "working"})
			}
			return Continue(), nil
		},
	}})
	h.handshake()
	id := h.request(MethodExtensionIntercept, intercept("session.start", map[string]string{"phase": "start"}))
	for want := 1; want <= 2; want++ {
		m := h.next()
		if m.method() != MethodHostUIPublish || m.id() != itoa(want) {
			t.Fatalf("request %d: %s", want, m.raw)
		}
		h.respond(m.fields["id"], map[string]any{"accepted": true})
		if err := <-published; err != nil {
			t.Fatal(err)
		}
	}
	m, _ := h.answerTo(id)
	var r InterceptResult
	h.result(m, &r)
}

func TestHostEOFEndsServeCleanly(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	h.handshake()
	_ = h.in.Close()
	if err := h.wait(); err != nil {
		t.Fatalf("Serve after EOF: %v", err)
	}
}

func TestServeRequiresHandler(t *testing.T) {
	if err := Serve(context.Background(), nil, Options{}); err == nil {
		t.Fatal("Serve accepted a nil handler")
	}
}

func TestServeReturnsContextError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := startHostCtx(t, ctx, testHandler{}, Options{})
	h.handshake()
	cancel()
	if err := h.wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve returned %v", err)
	}
}
