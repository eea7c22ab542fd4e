package extension

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

type testProvider struct {
	catalog []ProviderDescriptor
	stream  func(ctx context.Context, req StreamRequest) (<-chan StreamChunk, error)
}

func (p testProvider) Catalog(context.Context) ([]ProviderDescriptor, error) { return p.catalog, nil }

func (p testProvider) Stream(ctx context.Context, req StreamRequest) (<-chan StreamChunk, error) {
	return p.stream(ctx, req)
}

func chunksOf(items ...StreamChunk) func(context.Context, StreamRequest) (<-chan StreamChunk, error) {
	return func(context.Context, StreamRequest) (<-chan StreamChunk, error) {
		ch := make(chan StreamChunk, len(items))
		for _, c := range items {
			ch <- c
		}
		close(ch)
		return ch, nil
	}
}

func openParams(streamID string, seqBase int) map[string]any {
	return map[string]any{
		"streamId": streamID, "providerRef": "plugin/p/echo", "model": "m",
		"request": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}, "tools": []any{}, "maxTokens": 0},
		"seqBase": seqBase,
	}
}

type streamNote struct {
	method string
	params map[string]json.RawMessage
}

// openStream opens a stream and collects its notifications through its end.
func (h *scriptedHost) openStream(streamID string, seqBase int) []streamNote {
	h.t.Helper()
	id := h.request(MethodExtensionProviderStreamOpen, openParams(streamID, seqBase))
	var notes []streamNote
	acked := false
	for {
		m := h.next()
		if !m.has("method") && m.id() == id {
			var r StreamOpenResult
			h.result(m, &r)
			if !r.Accepted {
				h.t.Fatal("stream not accepted")
			}
			acked = true
			continue
		}
		if !acked {
			h.t.Fatalf("stream frame before the open ack: %s", m.raw)
		}
		var p map[string]json.RawMessage
		_ = m.decode("params", &p)
		notes = append(notes, streamNote{method: m.method(), params: p})
		if m.method() == MethodExtensionProviderStreamEnd {
			return notes
		}
	}
}

func TestStreamSequencingStartsAtMaxSeqBaseOne(t *testing.T) {
	usage := ProviderUsage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}
	h := startHost(t, testHandler{}, Options{Provider: testProvider{
		stream: chunksOf(TextChunk("a"), ReasoningChunk("r", "sig"), UsageChunk(usage), DoneChunk()),
	}})
	h.handshake()
	for _, c := range []struct {
		seqBase, first int
	}{{0, 1}, {1, 1}, {5, 5}} {
		notes := h.openStream("es_"+itoa(c.seqBase), c.seqBase)
		if len(notes) != 5 {
			t.Fatalf("seqBase %d: %d notes", c.seqBase, len(notes))
		}
		for i, n := range notes[:4] {
			var p StreamChunkParams
			raw, _ := json.Marshal(n.params)
			if n.method != MethodExtensionProviderStreamChunk || strictDecode(raw, &p) != nil || p.Seq != int64(c.first+i) {
				t.Fatalf("seqBase %d: note %d %s %s", c.seqBase, i, n.method, raw)
			}
		}
		var end StreamEndParams
		raw, _ := json.Marshal(notes[4].params)
		if err := strictDecode(raw, &end); err != nil || end.LastSeq != int64(c.first+3) || end.Error != "" || end.Interrupted {
			t.Fatalf("seqBase %d: end %s %v", c.seqBase, raw, err)
		}
	}
}

func TestEmptyStreamEndsWithLastSeqZero(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Provider: testProvider{stream: chunksOf()}})
	h.handshake()
	notes := h.openStream("es_empty", 1)
	if len(notes) != 1 || string(notes[0].params["lastSeq"]) != "0" {
		t.Fatalf("%+v", notes)
	}
}

func TestErrorChunkBecomesEndError(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Provider: testProvider{
		stream: chunksOf(TextChunk("a"), ErrorChunk("upstream said no"), TextChunk("never")),
	}})
	h.handshake()
	notes := h.openStream("es_err", 1)
	if len(notes) != 2 || notes[0].method != MethodExtensionProviderStreamChunk {
		t.Fatalf("%+v", notes)
	}
	if string(notes[1].params["error"]) != `"upstream said no"` || string(notes[1].params["lastSeq"]) != "1" {
		t.Fatalf("end %+v", notes[1].params)
	}
	if ErrorChunk("  ").Error.Message != frozenErrors[ErrProviderFailed].Message {
		t.Fatal("blank ErrorChunk message")
	}
}

func TestInvalidChunkEndsTheStream(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Provider: testProvider{
		stream: chunksOf(TextChunk("a"), StreamChunk{Type: ChunkUsage}),
	}})
	h.handshake()
	notes := h.openStream("es_bad", 1)
	if len(notes) != 2 || string(notes[1].params["error"]) != `"`+invalidChunkMessage+`"` {
		t.Fatalf("%+v", notes)
	}
}

func TestCancelInterruptsAndNothingFollows(t *testing.T) {
	produced := make(chan struct{})
	var wg sync.WaitGroup
	h := startHost(t, testHandler{}, Options{Provider: testProvider{
		stream: func(ctx context.Context, _ StreamRequest) (<-chan StreamChunk, error) {
			ch := make(chan StreamChunk, 8)
			ch <- TextChunk("1")
			ch <- TextChunk("2")
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ctx.Done()
				ch <- TextChunk("after cancel")
				close(ch)
				close(produced)
			}()
			return ch, nil
		},
	}})
	h.handshake()
	id := h.request(MethodExtensionProviderStreamOpen, openParams("es_c", 1))
	seen := 0
	for seen < 2 {
		m := h.next()
		if m.method() == MethodExtensionProviderStreamChunk {
			seen++
		}
	}
	cancelID := h.request(MethodExtensionProviderStreamCancel, map[string]any{"streamId": "es_c"})
	var gotEnd, gotCancel bool
	for !gotEnd || !gotCancel {
		m := h.next()
		switch {
		case m.method() == MethodExtensionProviderStreamEnd:
			var end StreamEndParams
			_ = m.decode("params", &end)
			if !end.Interrupted || end.LastSeq != 2 || end.Error != "" {
				t.Fatalf("end %s", m.raw)
			}
			gotEnd = true
		case m.id() == cancelID:
			var r StreamCancelResult
			h.result(m, &r)
			if !r.Cancelled {
				t.Fatal("cancel not acknowledged")
			}
			gotCancel = true
		case m.id() == id:
			// the open ack may trail the first chunks' reading loop
		default:
			t.Fatalf("frame after cancel: %s", m.raw)
		}
	}
	<-produced
	wg.Wait()
	// A round trip: anything the pump had sent would be ahead of it.
	var r StreamCancelResult
	h.result(h.call(MethodExtensionProviderStreamCancel, map[string]any{"streamId": "es_c"}), &r)
	if r.Cancelled {
		t.Fatal("a finished stream was cancelled again")
	}
}

func TestStreamOpenFailures(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	h := startHost(t, testHandler{}, Options{Provider: testProvider{
		stream: func(ctx context.Context, req StreamRequest) (<-chan StreamChunk, error) {
			switch req.StreamID {
			case "es_fail":
				return nil, errors.New("no credentials for https://secret")
			case "es_nil":
				return nil, nil
			}
			ch := make(chan StreamChunk)
			go func() {
				select {
				case <-block:
				case <-ctx.Done():
				}
				close(ch)
			}()
			return ch, nil
		},
	}})
	h.handshake()
	e := h.expectReason(h.call(MethodExtensionProviderStreamOpen, openParams("es_fail", 1)), DomainErrorCode, ErrProviderFailed)
	if e.Message != frozenErrors[ErrProviderFailed].Message {
		t.Fatalf("leaked %q", e.Message)
	}
	h.expectReason(h.call(MethodExtensionProviderStreamOpen, openParams("es_nil", 1)), CodeInternal, ErrInternal)
	var r StreamOpenResult
	h.result(h.call(MethodExtensionProviderStreamOpen, openParams("es_live", 1)), &r)
	h.expectReason(h.call(MethodExtensionProviderStreamOpen, openParams("es_live", 1)), CodeInvalidRequest, ErrProtocolError)
	bad := openParams("es_bad", 1)
	bad["request"] = map[string]any{"messages": []any{}, "tools": []any{map[string]any{"name": "t", "parameters": []any{}}}, "maxTokens": 0}
	h.expectReason(h.call(MethodExtensionProviderStreamOpen, bad), CodeInvalidParams, ErrInvalidParams)
	bad = openParams("es_bad", -1)
	h.expectReason(h.call(MethodExtensionProviderStreamOpen, bad), CodeInvalidParams, ErrInvalidParams)
}

func TestCatalog(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Provider: testProvider{}})
	h.handshake()
	m := h.call(MethodExtensionProviderCatalog, nil)
	if string(m.fields["result"]) != `{"providers":[]}` {
		t.Fatalf("nil catalog must be an empty array: %s", m.raw)
	}
	h2 := startHost(t, testHandler{}, Options{Provider: testProvider{catalog: []ProviderDescriptor{{Ref: "plugin/p/echo", Model: "m"}}}})
	h2.handshake()
	var r ProviderCatalogResult
	h2.result(h2.call(MethodExtensionProviderCatalog, map[string]any{}), &r)
	if len(r.Providers) != 1 || r.Providers[0].Ref != "plugin/p/echo" {
		t.Fatalf("%+v", r)
	}
	h2.expectReason(h2.call(MethodExtensionProviderCatalog, map[string]any{"x": 1}), CodeInvalidParams, ErrInvalidParams)
	h3 := startHost(t, testHandler{}, Options{})
	h3.handshake()
	h3.expectReason(h3.call(MethodExtensionProviderCatalog, nil), CodeMethodNotFound, ErrUnknownMethod)
	h3.expectReason(h3.call(MethodExtensionProviderStreamOpen, openParams("es_x", 1)), CodeMethodNotFound, ErrUnknownMethod)
}

// A provider faster than the host waits for room in the 256-entry FIFO;
// every chunk arrives, in order.
func TestLongStreamKeepsOrder(t *testing.T) {
	const n = 1000
	items := make([]StreamChunk, n)
	for i := range items {
		items[i] = TextChunk(itoa(i))
	}
	h := startHost(t, testHandler{}, Options{Provider: testProvider{stream: chunksOf(items...)}})
	h.handshake()
	notes := h.openStream("es_long", 1)
	if len(notes) != n+1 {
		t.Fatalf("%d notes", len(notes))
	}
	for i := 0; i < n; i++ {
		var c ProviderChunk
		_ = json.Unmarshal(notes[i].params["chunk"], &c)
		if string(notes[i].params["seq"]) != itoa(i+1) || c.Text != itoa(i) {
			t.Fatalf("note %d: seq %s text %q", i, notes[i].params["seq"], c.Text)
		}
	}
}

func TestChunkValidation(t *testing.T) {
	bad := []ProviderChunk{
		{Type: "words"},
		{Type: ChunkText, ArgChars: -1},
		{Type: ChunkError},
		{Type: ChunkText, Error: &ProviderError{Code: ProviderFailed, Message: "m"}},
		{Type: ChunkUsage},
		{Type: ChunkError, Error: &ProviderError{Code: "other", Message: "m"}},
		{Type: ChunkToolCall, ToolCall: &ProviderToolCall{ID: "1"}},
	}
	for i, c := range bad {
		if c.Validate() == nil {
			t.Fatalf("chunk %d accepted", i)
		}
	}
	good := []ProviderChunk{TextChunk(""), DoneChunk(), ErrorChunk("x"), UsageChunk(ProviderUsage{}),
		{Type: ChunkToolCall, ToolCall: &ProviderToolCall{ID: "1", Name: "n", Arguments: "{}"}}}
	for i, c := range good {
		if err := c.Validate(); err != nil {
			t.Fatalf("chunk %d refused: %v", i, err)
		}
	}
	if (StreamChunkParams{StreamID: "s", Seq: 0, Chunk: TextChunk("a")}).Validate() == nil {
		t.Fatal("seq 0 accepted")
	}
	if (StreamOpenParams{StreamID: "s", ProviderRef: "r", Request: ProviderRequest{Messages: []ProviderMessage{}}}).Validate() == nil {
		t.Fatal("missing tools array accepted")
	}
}

func TestOversizedChunkEndsTheStream(t *testing.T) {
	h := startHost(t, testHandler{}, Options{Provider: testProvider{
		stream: chunksOf(TextChunk("ok"), TextChunk(strings.Repeat("x", FrameBytes)), TextChunk("never")),
	}})
	h.handshake()
	notes := h.openStream("es_big", 1)
	if len(notes) != 2 || string(notes[1].params["error"]) != `"`+invalidChunkMessage+`"` || string(notes[1].params["lastSeq"]) != "1" {
		t.Fatalf("%d notes, end %v", len(notes), notes[len(notes)-1].params)
	}
}
