package extension

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

func TestRequestBeforeInitializeIsAProtocolError(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	m := h.call(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"}))
	e := h.expectReason(m, CodeInvalidRequest, ErrProtocolError)
	mustContain(t, e.Message, "before the handshake completed")
	h.handshake()
}

func TestNotificationsBeforeTheBarrierAreDropped(t *testing.T) {
	seen := make(chan string, 4)
	h := startHost(t, testHandler{}, Options{Observer: func(_ context.Context, _ string, payload json.RawMessage) {
		seen <- string(payload)
	}})
	h.notify(MethodExtensionEvent, map[string]any{"event": "input.receive", "payload": "early"})
	h.handshake()
	h.notify(MethodExtensionEvent, map[string]any{"event": "input.receive", "payload": "late"})
	if got := <-seen; got != `"late"` {
		t.Fatalf("observer saw %s first", got)
	}
	h.call(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"}))
	select {
	case got := <-seen:
		t.Fatalf("observer also saw %s", got)
	default:
	}
}

// Unlike upstream, a malformed initialize does not use up the attempt.
func TestMalformedInitializeCanBeRetried(t *testing.T) {
	calls := 0
	h := startHost(t, testHandler{init: func(context.Context, InitializeParams) (*InitializeResult, error) {
		calls++
		return &InitializeResult{Name: "n", Version: "1"}, nil
	}}, Options{})
	bad := initParams()
	delete(bad, "session")
	h.expectReason(h.call(MethodExtensionInitialize, bad), CodeInvalidParams, ErrInvalidParams)
	h.handshake()
	if calls != 1 {
		t.Fatalf("Initialize ran %d times", calls)
	}
	// The barrier is open: an intercept is served.
	var r InterceptResult
	h.result(h.call(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"})), &r)
	if r.Decision != DecisionContinue {
		t.Fatalf("decision %q", r.Decision)
	}
}

func TestSecondInitializeIsRefused(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	h.handshake()
	h.expectReason(h.call(MethodExtensionInitialize, initParams()), CodeInvalidRequest, ErrProtocolError)
}

func TestSecondInitializeDuringHandshakeIsRefused(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	var r InitializeResult
	h.result(h.call(MethodExtensionInitialize, initParams()), &r)
	h.expectReason(h.call(MethodExtensionInitialize, initParams()), CodeInvalidRequest, ErrProtocolError)
	// Requests other than shutdown wait for initialized.
	h.expectReason(h.call(MethodExtensionProviderCatalog, nil), CodeInvalidRequest, ErrProtocolError)
	h.notify(MethodExtensionInitialized, nil)
	h.expectReason(h.call(MethodExtensionProviderCatalog, nil), CodeMethodNotFound, ErrUnknownMethod)
}

func TestWrongProtocolEndsTheConnection(t *testing.T) {
	cases := []struct {
		id, version string
		code        int
		reason      ErrorReason
	}{
		{"reasonix.extension.v1", "2", DomainErrorCode, ErrUnsupportedVersion},
		{ProtocolID, "3", DomainErrorCode, ErrUnsupportedVersion},
		{ProtocolID, "two", CodeInvalidRequest, ErrProtocolError},
	}
	for _, c := range cases {
		ran := false
		h := startHost(t, testHandler{init: func(context.Context, InitializeParams) (*InitializeResult, error) {
			ran = true
			return &InitializeResult{Name: "n", Version: "1"}, nil
		}}, Options{})
		p := initParams()
		p["protocolId"], p["protocolVersion"] = c.id, c.version
		h.expectReason(h.call(MethodExtensionInitialize, p), c.code, c.reason)
		if err := h.wait(); err == nil {
			t.Fatalf("%s/%s: Serve returned nil", c.id, c.version)
		}
		if ran {
			t.Fatalf("%s/%s: Initialize ran", c.id, c.version)
		}
	}
}

func TestInitializeResultIsCompleted(t *testing.T) {
	h := startHost(t, testHandler{init: func(context.Context, InitializeParams) (*InitializeResult, error) {
		return &InitializeResult{ProtocolVersion: "7", Subscriptions: []string{"input.receive"}}, nil
	}}, Options{Name: "from-options", Version: "9.9.9", Tools: map[string]ToolFunc{
		"zeta":  func(context.Context, json.RawMessage) (*ToolCallResult, error) { return nil, nil },
		"alpha": func(context.Context, json.RawMessage) (*ToolCallResult, error) { return nil, nil },
	}})
	m := h.call(MethodExtensionInitialize, initParams())
	var fields map[string]json.RawMessage
	if err := m.decode("result", &fields); err != nil {
		t.Fatal(err)
	}
	if string(fields["protocolVersion"]) != `"2"` || string(fields["name"]) != `"from-options"` ||
		string(fields["version"]) != `"9.9.9"` || string(fields["stateSchemaVersion"]) != "0" ||
		string(fields["tools"]) != `["alpha","zeta"]` {
		t.Fatalf("result %s", m.raw)
	}
}

func TestInitializeWithoutNameFails(t *testing.T) {
	h := startHost(t, testHandler{init: func(context.Context, InitializeParams) (*InitializeResult, error) {
		return &InitializeResult{}, nil
	}}, Options{})
	e := h.expectReason(h.call(MethodExtensionInitialize, initParams()), CodeInternal, ErrInternal)
	if e.Message != frozenErrors[ErrInternal].Message {
		t.Fatalf("message %q", e.Message)
	}
	if err := h.wait(); err == nil {
		t.Fatal("Serve returned nil after a failed handshake")
	}
}

func TestInitializeHandlerErrorDoesNotLeak(t *testing.T) {
	h := startHost(t, testHandler{init: func(context.Context, InitializeParams) (*InitializeResult, error) {
		return nil, errors.New("token sk-secret rejected")
	}}, Options{})
	e := h.expectReason(h.call(MethodExtensionInitialize, initParams()), CodeInternal, ErrInternal)
	if e.Message != frozenErrors[ErrInternal].Message {
		t.Fatalf("handler error leaked: %q", e.Message)
	}
	if err := h.wait(); err == nil || err.Error() != "token sk-secret rejected" {
		t.Fatalf("Serve returned %v", err)
	}
}

func TestHostCallsBeforeTheBarrierReturnErrNotReady(t *testing.T) {
	got := make(chan error, 2)
	h := startHost(t, testHandler{init: func(ctx context.Context, _ InitializeParams) (*InitializeResult, error) {
		got <- HostUI{}.PublishStatus(ctx, "s1", 1, "st", UIStatusPayload{Label: "x"})
		_, err := ReadContentRef(ctx, "content_0123")
		got <- err
		return &InitializeResult{Name: "n", Version: "1"}, nil
	}}, Options{})
	h.handshake()
	for i := 0; i < 2; i++ {
		if err := <-got; !errors.Is(err, ErrNotReady) {
			t.Fatalf("call %d before initialized: %v", i, err)
		}
	}
	if err := (HostUI{}).PublishStatus(context.Background(), "s1", 1, "st", UIStatusPayload{Label: "x"}); !errors.Is(err, ErrNoConnection) {
		t.Fatalf("call without an SDK context: %v", err)
	}
	if _, err := ReadContentRef(context.Background(), "r"); !errors.Is(err, ErrNoConnection) {
		t.Fatalf("ReadContentRef without an SDK context: %v", err)
	}
}

// An initialized that arrives before the initialize answer opens nothing.
func TestEarlyInitializedDoesNotOpenTheBarrier(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	h := startHost(t, testHandler{init: func(context.Context, InitializeParams) (*InitializeResult, error) {
		close(started)
		<-release
		return &InitializeResult{Name: "n", Version: "1"}, nil
	}}, Options{})
	id := h.request(MethodExtensionInitialize, initParams())
	<-started
	h.notify(MethodExtensionInitialized, nil)
	// The read loop handles frames in order, so this request is gated after
	// the early initialized was dropped.
	h.expectReason(h.call(MethodExtensionProviderCatalog, nil), CodeInvalidRequest, ErrProtocolError)
	close(release)
	m, _ := h.answerTo(id)
	var r InitializeResult
	h.result(m, &r)
	h.expectReason(h.call(MethodExtensionProviderCatalog, nil), CodeInvalidRequest, ErrProtocolError)
	h.notify(MethodExtensionInitialized, nil)
	h.expectReason(h.call(MethodExtensionProviderCatalog, nil), CodeMethodNotFound, ErrUnknownMethod)
}

func TestUnknownMethodAfterTheBarrier(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	h.handshake()
	e := h.expectReason(h.call("extension/nope", nil), CodeMethodNotFound, ErrUnknownMethod)
	if e.Message != frozenErrors[ErrUnknownMethod].Message {
		t.Fatalf("message %q", e.Message)
	}
	// Upstream has no tools; here an unserved tool method is unknown_method.
	h.expectReason(h.call(MethodExtensionToolCall, map[string]any{"name": "x", "arguments": map[string]any{}, "timeoutMillis": 0}), CodeMethodNotFound, ErrUnknownMethod)
}
