package extension

import (
	"context"
	"encoding/json"
	"testing"
)

func TestShutdownRunsTheHookAndEndsServe(t *testing.T) {
	hookRan := make(chan bool, 1)
	h := startHost(t, testHandler{}, Options{Shutdown: func(ctx context.Context) {
		_, hasDeadline := ctx.Deadline()
		hookRan <- hasDeadline
	}})
	h.handshake()
	h.shutdown()
	if !<-hookRan {
		t.Fatal("the hook had no deadline although timeoutMillis > 0")
	}
}

func TestShutdownHookIsBoundedByTheTimeout(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	h := startHost(t, testHandler{}, Options{Shutdown: func(context.Context) { <-stuck }})
	h.handshake()
	var r ShutdownResult
	h.result(h.call(MethodExtensionShutdown, map[string]any{"timeoutMillis": 1}), &r)
	if !r.Accepted {
		t.Fatal("not accepted")
	}
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
	mustContain(t, h.logs.String(), "did not return within 1ms")
}

func TestShutdownBeforeInitialize(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	h.shutdown()
}

func TestInvalidShutdownParams(t *testing.T) {
	h := startHost(t, testHandler{}, Options{})
	h.handshake()
	h.expectReason(h.call(MethodExtensionShutdown, map[string]any{"timeoutMillis": -1}), CodeInvalidParams, ErrInvalidParams)
	h.expectReason(h.call(MethodExtensionShutdown, nil), CodeInvalidParams, ErrInvalidParams)
	h.shutdown()
}

func TestOpenStreamsEndBeforeTheShutdownAnswer(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Provider: testProvider{
		stream: func(ctx context.Context, _ StreamRequest) (<-chan StreamChunk, error) {
			ch := make(chan StreamChunk, 1)
			ch <- TextChunk("first")
			go func() {
				<-ctx.Done()
				close(ch)
			}()
			return ch, nil
		},
	}})
	h.handshake()
	id := h.request(MethodExtensionProviderStreamOpen, openParams("es_s", 1))
	for {
		if m := h.next(); m.method() == MethodExtensionProviderStreamChunk {
			break
		}
	}
	sid := h.request(MethodExtensionShutdown, map[string]any{"timeoutMillis": 1000})
	sawEnd := false
	for {
		m := h.next()
		if m.method() == MethodExtensionProviderStreamEnd {
			var end StreamEndParams
			_ = m.decode("params", &end)
			if !end.Interrupted || end.LastSeq != 1 {
				t.Fatalf("%s", m.raw)
			}
			sawEnd = true
			continue
		}
		if m.id() == id {
			continue
		}
		if m.id() == sid {
			if !sawEnd {
				t.Fatal("the shutdown answer came before the stream's end")
			}
			break
		}
		t.Fatalf("unexpected %s", m.raw)
	}
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
}

func TestNothingIsServedAfterShutdown(t *testing.T) {
	release := make(chan struct{})
	h := startHost(t, testHandler{}, Options{Shutdown: func(context.Context) { <-release }})
	h.handshake()
	sid := h.request(MethodExtensionShutdown, map[string]any{"timeoutMillis": 0})
	// The hook is still running: later requests are already refused.
	m := h.call(MethodExtensionIntercept, intercept("input.receive", json.RawMessage(`1`)))
	e := h.expectReason(m, CodeInvalidRequest, ErrProtocolError)
	mustContain(t, e.Message, "after shutdown")
	h.expectReason(h.call(MethodExtensionShutdown, map[string]any{"timeoutMillis": 0}), CodeInvalidRequest, ErrProtocolError)
	close(release)
	m, _ = h.answerTo(sid)
	var r ShutdownResult
	h.result(m, &r)
	if err := h.wait(); err != nil {
		t.Fatal(err)
	}
}
