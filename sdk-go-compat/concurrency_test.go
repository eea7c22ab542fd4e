package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestInFlightLimitAnswersServerBusy(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 64)
	var ran atomic.Int32
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"*": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			ran.Add(1)
			entered <- struct{}{}
			<-release
			return Continue(), nil
		},
	}})
	h.handshake()
	ids := make([]string, 0, maxInFlight)
	for i := 0; i < maxInFlight; i++ {
		ids = append(ids, h.request(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"})))
	}
	for i := 0; i < maxInFlight; i++ {
		<-entered
	}
	busy := h.call(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"}))
	e := busy.errorObj(t)
	if e.Code != CodeServerBusy || e.Message != "server busy" || e.Data != nil {
		t.Fatalf("busy answer %s", busy.raw)
	}
	if _, hasData := mustErrorFields(t, busy)["data"]; hasData {
		t.Fatalf("server busy carries no data: %s", busy.raw)
	}
	close(release)
	answered := map[string]bool{}
	for len(answered) < maxInFlight {
		m := h.next()
		var r InterceptResult
		h.result(m, &r)
		answered[m.id()] = true
	}
	for _, id := range ids {
		if !answered[id] {
			t.Fatalf("request %s was not answered", id)
		}
	}
	if ran.Load() != maxInFlight {
		t.Fatalf("%d interceptors ran", ran.Load())
	}
	var r InterceptResult
	h.result(h.call(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"})), &r)
}

func TestShutdownIsServedWhileAllSlotsAreBusy(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 64)
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"*": func(ctx context.Context, _ string, _ json.RawMessage) (*InterceptResult, error) {
			entered <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return Continue(), nil
		},
	}})
	h.handshake()
	for i := 0; i < maxInFlight; i++ {
		h.request(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"}))
	}
	for i := 0; i < maxInFlight; i++ {
		<-entered
	}
	id := h.request(MethodExtensionShutdown, map[string]any{"timeoutMillis": 0})
	m, _ := h.answerTo(id)
	var r ShutdownResult
	h.result(m, &r)
	if !r.Accepted {
		t.Fatal("shutdown not accepted")
	}
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
	close(release)
}

func TestNotificationsBeyondTheLimitAreDropped(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 64)
	var observed atomic.Int32
	h := startHost(t, testHandler{}, Options{
		Interceptors: map[string]InterceptorFunc{"*": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			entered <- struct{}{}
			<-release
			return Continue(), nil
		}},
		Observer: func(context.Context, string, json.RawMessage) { observed.Add(1) },
	})
	h.handshake()
	for i := 0; i < maxInFlight; i++ {
		h.request(MethodExtensionIntercept, intercept("input.receive", map[string]string{"text": "x"}))
	}
	for i := 0; i < maxInFlight; i++ {
		<-entered
	}
	h.notify(MethodExtensionEvent, map[string]any{"event": "input.receive", "payload": 1})
	// Frames are handled in order: once this request is refused as busy, the
	// event before it was already dropped.
	if e := h.call(MethodExtensionIntercept, intercept("input.receive", 1)).errorObj(t); e.Code != CodeServerBusy {
		t.Fatalf("code %d", e.Code)
	}
	close(release)
	for i := 0; i < maxInFlight; i++ {
		h.next()
	}
	h.call(MethodExtensionIntercept, intercept("input.receive", 1))
	if observed.Load() != 0 {
		t.Fatalf("a notification beyond the limit was observed")
	}
	mustContain(t, h.logs.String(), "dropping notification")
}

func TestPanickingHandlerIsAnInternalError(t *testing.T) {
	h := startHost(t, testHandler{}, Options{
		Interceptors: map[string]InterceptorFunc{"*": func(_ context.Context, _ string, p json.RawMessage) (*InterceptResult, error) {
			if string(p) == `"boom"` {
				panic("boom")
			}
			return Continue(), nil
		}},
		Observer: func(context.Context, string, json.RawMessage) { panic("observer boom") },
	})
	h.handshake()
	e := h.expectReason(h.call(MethodExtensionIntercept, intercept("input.receive", "boom")), CodeInternal, ErrInternal)
	if e.Message != frozenErrors[ErrInternal].Message {
		t.Fatalf("message %q", e.Message)
	}
	h.notify(MethodExtensionEvent, map[string]any{"event": "input.receive", "payload": 1})
	var r InterceptResult
	h.result(h.call(MethodExtensionIntercept, intercept("input.receive", "fine")), &r)
	if r.Decision != DecisionContinue {
		t.Fatalf("decision %q", r.Decision)
	}
}

func TestHandlerErrorsNeverLeak(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"input.receive": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			return nil, fmt.Errorf("dial https://api.example/v1?key=sk-123: refused")
		},
		"tool.before": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			return nil, &ProtocolError{Reason: ErrCapabilityNotDeclared, Message: "chosen by the handler"}
		},
		"tool.after": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			return &InterceptResult{Decision: "maybe"}, nil
		},
		"session.end": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			return nil, &ProtocolError{Reason: "made_up", Message: "x"}
		},
	}})
	h.handshake()
	e := h.expectReason(h.call(MethodExtensionIntercept, intercept("input.receive", 1)), CodeInternal, ErrInternal)
	if e.Message != frozenErrors[ErrInternal].Message {
		t.Fatalf("leaked %q", e.Message)
	}
	e = h.expectReason(h.call(MethodExtensionIntercept, intercept("tool.before", 1)), DomainErrorCode, ErrCapabilityNotDeclared)
	if e.Message != "chosen by the handler" {
		t.Fatalf("message %q", e.Message)
	}
	h.expectReason(h.call(MethodExtensionIntercept, intercept("tool.after", 1)), CodeInternal, ErrInternal)
	h.expectReason(h.call(MethodExtensionIntercept, intercept("session.end", 1)), CodeInternal, ErrInternal)
}

func TestInterceptorDeadlineIsInterceptTimeout(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"*": func(ctx context.Context, _ string, _ json.RawMessage) (*InterceptResult, error) {
			<-ctx.Done()
			return nil, fmt.Errorf("waited: %w", ctx.Err())
		},
	}})
	h.handshake()
	p := intercept("input.receive", 1)
	p["timeoutMillis"] = 1
	h.expectReason(h.call(MethodExtensionIntercept, p), DomainErrorCode, ErrInterceptTimeout)
}

func TestInterceptorSelectionAndDecisions(t *testing.T) {
	var gotEvent atomic.Value
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"permission.decision": func(context.Context, string, json.RawMessage) (*InterceptResult, error) {
			return Deny("not today"), nil
		},
		"*": func(_ context.Context, event string, _ json.RawMessage) (*InterceptResult, error) {
			gotEvent.Store(event)
			return nil, nil
		},
	}})
	h.handshake()
	var r InterceptResult
	h.result(h.call(MethodExtensionIntercept, intercept("permission.decision", map[string]any{"name": "x"})), &r)
	if r.Decision != DecisionDeny || r.Reason != "not today" {
		t.Fatalf("%+v", r)
	}
	h.result(h.call(MethodExtensionIntercept, intercept("tool.before", 1)), &r)
	if r.Decision != DecisionContinue || gotEvent.Load() != "tool.before" {
		t.Fatalf("%+v %v", r, gotEvent.Load())
	}
}

func TestNoInterceptorMeansContinue(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	h.handshake()
	var r InterceptResult
	h.result(h.call(MethodExtensionIntercept, intercept("session.start", 1)), &r)
	if r.Decision != DecisionContinue {
		t.Fatalf("%+v", r)
	}
}

func TestDecisionHelpers(t *testing.T) {
	if Continue().Decision != DecisionContinue || Allow().Decision != DecisionAllow ||
		Block("b").Reason != "b" || Deny("d").Decision != DecisionDeny {
		t.Fatal("decision helpers")
	}
	r, err := Replace(map[string]string{"text": "x"})
	if err != nil || string(r.Replacement) != `{"text":"x"}` || r.Decision != DecisionReplace {
		t.Fatalf("%v %s", err, r.Replacement)
	}
	if _, err := Replace(json.RawMessage(`{bad`)); err == nil {
		t.Fatal("invalid raw JSON accepted")
	}
	if _, err := Replace(func() {}); err == nil {
		t.Fatal("unmarshalable value accepted")
	}
	if pe := MustProtocolError(ErrInternal); pe.Reason != ErrInternal || pe.Message != frozenErrors[ErrInternal].Message {
		t.Fatalf("MustProtocolError: %+v", pe)
	}
	if _, err := NewProtocolError("made_up"); err == nil {
		t.Fatal("NewProtocolError accepted an unknown reason")
	}
	var pe *ProtocolError
	if !errors.As(error(&ProtocolError{Reason: ErrStreamGap}), &pe) || pe.Error() != frozenErrors[ErrStreamGap].Message {
		t.Fatal("a ProtocolError without a message reads as the frozen text")
	}
}
