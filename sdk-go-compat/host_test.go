package extension

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests drive Serve through io.Pipe with a scripted host: the test
// writes frames as the host would and reads what the sidecar sends back.

// safetyTimeout only keeps a broken test from hanging; no test asserts on
// elapsed time.
const safetyTimeout = 20 * time.Second

type wireMsg struct {
	raw    []byte
	fields map[string]json.RawMessage
}

func (m wireMsg) has(key string) bool { _, ok := m.fields[key]; return ok }

func (m wireMsg) str(key string) string {
	var s string
	_ = json.Unmarshal(m.fields[key], &s)
	return s
}

func (m wireMsg) id() string { return string(m.fields["id"]) }

func (m wireMsg) method() string { return m.str("method") }

func (m wireMsg) decode(key string, v any) error {
	return json.Unmarshal(m.fields[key], v)
}

type errObj struct {
	Code    int                `json:"code"`
	Message string             `json:"message"`
	Data    *ProtocolErrorData `json:"data"`
}

func (m wireMsg) errorObj(t *testing.T) errObj {
	t.Helper()
	if !m.has("error") {
		t.Fatalf("expected an error answer, got %s", m.raw)
	}
	var e errObj
	if err := m.decode("error", &e); err != nil {
		t.Fatalf("bad error object in %s: %v", m.raw, err)
	}
	return e
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type scriptedHost struct {
	t      *testing.T
	in     *io.PipeWriter // host -> sidecar
	lines  chan wireMsg
	served chan error
	logs   *syncBuffer
	nextID int
}

type testHandler struct {
	init func(ctx context.Context, p InitializeParams) (*InitializeResult, error)
}

func (h testHandler) Initialize(ctx context.Context, p InitializeParams) (*InitializeResult, error) {
	if h.init != nil {
		return h.init(ctx, p)
	}
	return &InitializeResult{Name: "test-ext", Version: "0.1.0"}, nil
}

func startHost(t *testing.T, h Handler, opts Options) *scriptedHost {
	t.Helper()
	return startHostCtx(t, context.Background(), h, opts)
}

func startHostCtx(t *testing.T, ctx context.Context, h Handler, opts Options) *scriptedHost {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logs := &syncBuffer{}
	opts.Stdin = inR
	opts.Stdout = outW
	opts.Logger = log.New(logs, "", 0)
	sh := &scriptedHost{t: t, in: inW, lines: make(chan wireMsg, 4096), served: make(chan error, 1), logs: logs, nextID: 100}
	go func() {
		err := Serve(ctx, h, opts)
		_ = outW.Close()
		sh.served <- err
	}()
	go func() {
		defer close(sh.lines)
		r := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				if line[len(line)-1] != '\n' {
					t.Errorf("sidecar frame without trailing newline: %q", line)
				}
				var fields map[string]json.RawMessage
				if jerr := json.Unmarshal(line, &fields); jerr != nil {
					t.Errorf("sidecar sent invalid JSON %q: %v", line, jerr)
				}
				sh.lines <- wireMsg{raw: line, fields: fields}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		_ = outR.Close()
	})
	return sh
}

func (h *scriptedHost) sendRaw(line string) {
	h.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(h.in, line)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			h.t.Fatalf("write to sidecar: %v", err)
		}
	case <-time.After(safetyTimeout):
		h.t.Fatalf("sidecar stopped reading")
	}
}

func (h *scriptedHost) sendJSON(v any) {
	h.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		h.t.Fatal(err)
	}
	h.sendRaw(string(b) + "\n")
}

// request sends a host request and returns its id token.
func (h *scriptedHost) request(method string, params any) string {
	h.t.Helper()
	h.nextID++
	msg := map[string]any{"jsonrpc": "2.0", "id": h.nextID, "method": method}
	if params != nil {
		msg["params"] = params
	}
	h.sendJSON(msg)
	return fmt.Sprint(h.nextID)
}

func (h *scriptedHost) notify(method string, params any) {
	h.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	h.sendJSON(msg)
}

func (h *scriptedHost) next() wireMsg {
	h.t.Helper()
	select {
	case m, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("sidecar output closed; logs:\n%s", h.logs.String())
		}
		return m
	case <-time.After(safetyTimeout):
		h.t.Fatalf("no frame from the sidecar; logs:\n%s", h.logs.String())
	}
	return wireMsg{}
}

// answerTo reads frames until the answer to id; other frames are returned
// in order as well.
func (h *scriptedHost) answerTo(id string) (wireMsg, []wireMsg) {
	h.t.Helper()
	var others []wireMsg
	for {
		m := h.next()
		if !m.has("method") && m.id() == id {
			return m, others
		}
		others = append(others, m)
	}
}

func (h *scriptedHost) call(method string, params any) wireMsg {
	h.t.Helper()
	id := h.request(method, params)
	m, others := h.answerTo(id)
	if len(others) > 0 {
		h.t.Fatalf("unexpected frames before the answer to %s: %d (first %s)", method, len(others), others[0].raw)
	}
	return m
}

func (h *scriptedHost) result(m wireMsg, v any) {
	h.t.Helper()
	if !m.has("result") {
		h.t.Fatalf("expected a result, got %s; logs:\n%s", m.raw, h.logs.String())
	}
	if err := m.decode("result", v); err != nil {
		h.t.Fatalf("decode result %s: %v", m.raw, err)
	}
}

func (h *scriptedHost) respond(id json.RawMessage, result any) {
	h.t.Helper()
	h.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func (h *scriptedHost) respondError(id json.RawMessage, reason ErrorReason) {
	h.t.Helper()
	spec := frozenErrors[reason]
	h.sendJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{
		"code": spec.Code, "message": spec.Message, "data": map[string]any{"reason": reason, "retryable": spec.Retryable},
	}})
}

func (h *scriptedHost) wait() error {
	h.t.Helper()
	select {
	case err := <-h.served:
		return err
	case <-time.After(safetyTimeout):
		h.t.Fatalf("Serve did not return")
	}
	return nil
}

func initParams() map[string]any {
	return map[string]any{
		"protocolId":              ProtocolID,
		"protocolVersion":         "2",
		"manifest":                map[string]any{"intercepts": []string{"input.receive"}},
		"session":                 map[string]any{"sessionId": "s1", "workspaceRoot": "/w", "generation": 1},
		"capabilities":            map[string]any{"contentRefs": true, "uiHost": "headless", "protocolVersion": "2"},
		"dependencySchemaVersion": 1,
	}
}

// handshake completes initialize + initialized and returns the result.
func (h *scriptedHost) handshake() InitializeResult {
	h.t.Helper()
	m := h.call(MethodExtensionInitialize, initParams())
	var r InitializeResult
	h.result(m, &r)
	h.notify(MethodExtensionInitialized, map[string]any{})
	return r
}

func (h *scriptedHost) expectReason(m wireMsg, code int, reason ErrorReason) errObj {
	h.t.Helper()
	e := m.errorObj(h.t)
	if e.Code != code || e.Data == nil || e.Data.Reason != reason || e.Data.Retryable != frozenErrors[reason].Retryable {
		h.t.Fatalf("want %d/%s, got %s", code, reason, m.raw)
	}
	return e
}

func (h *scriptedHost) shutdown() {
	h.t.Helper()
	var r ShutdownResult
	h.result(h.call(MethodExtensionShutdown, map[string]any{"timeoutMillis": 1000}), &r)
	if !r.Accepted {
		h.t.Fatalf("shutdown not accepted")
	}
	if err := h.wait(); err != nil {
		h.t.Fatalf("Serve after shutdown: %v", err)
	}
}

func intercept(event string, payload any) map[string]any {
	return map[string]any{"event": event, "seq": 1, "payload": payload, "timeoutMillis": 5000}
}

func mustContain(t *testing.T, haystack, needle string) {
	t.Helper()
	if !strings.Contains(haystack, needle) {
		t.Fatalf("%q does not contain %q", haystack, needle)
	}
}
