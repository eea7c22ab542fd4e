package extension

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// contentStore plays the host's side of host/content/read.
type contentStore struct {
	data      []byte
	ref       string
	sha       string // reported digest (defaults to the real one)
	chunk     int    // bytes per answer (defaults to ContentRefChunkBytes)
	expired   bool
	mutate    func(r map[string]any)
	readsSeen []int64
}

func (c *contentStore) serve(h *scriptedHost, m wireMsg) {
	h.t.Helper()
	var p ContentReadParams
	if err := m.decode("params", &p); err != nil || m.method() != MethodHostContentRead {
		h.t.Fatalf("expected host/content/read, got %s", m.raw)
	}
	c.readsSeen = append(c.readsSeen, p.Offset)
	if c.expired || p.ContentRef != c.ref {
		h.respondError(m.fields["id"], ErrContentRefExpired)
		return
	}
	size := c.chunk
	if size == 0 {
		size = ContentRefChunkBytes
	}
	end := int(p.Offset) + size
	if end > len(c.data) {
		end = len(c.data)
	}
	sum := sha256.Sum256(c.data)
	digest := hex.EncodeToString(sum[:])
	if c.sha != "" {
		digest = c.sha
	}
	r := map[string]any{
		"contentRef": p.ContentRef, "offset": p.Offset,
		"dataBase64": base64.StdEncoding.EncodeToString(c.data[p.Offset:end]),
		"totalBytes": len(c.data), "sha256": digest, "encoding": "utf8",
	}
	if end < len(c.data) {
		r["nextOffset"] = end
	}
	if c.mutate != nil {
		c.mutate(r)
	}
	h.respond(m.fields["id"], r)
}

func externalizedIntercept(c *contentStore, inline any) map[string]any {
	sum := sha256.Sum256(c.data)
	p := intercept("input.receive", inline)
	p["externalized"] = []any{map[string]any{
		"jsonPointer": "/payload", "contentRef": c.ref, "totalBytes": len(c.data), "sha256": hex.EncodeToString(sum[:]),
	}}
	return p
}

func lengthInterceptor() Options {
	return Options{Interceptors: map[string]InterceptorFunc{
		"*": func(_ context.Context, _ string, payload json.RawMessage) (*InterceptResult, error) {
			var p struct{ Text string }
			if err := json.Unmarshal(payload, &p); err != nil {
				return nil, err
			}
			return Block("len=" + itoa(len(p.Text))), nil
		},
	}}
}

func bigPayload(n int) []byte {
	b, _ := json.Marshal(map[string]string{"text": strings.Repeat("é", n/2)})
	return b
}

// runExternalized sends the intercept, serves every content read, and
// returns the intercept's answer.
func runExternalized(t *testing.T, c *contentStore, inline any) (*scriptedHost, wireMsg) {
	h := startHost(t, testHandler{}, lengthInterceptor())
	h.handshake()
	id := h.request(MethodExtensionIntercept, externalizedIntercept(c, inline))
	for {
		m := h.next()
		if !m.has("method") && m.id() == id {
			return h, m
		}
		c.serve(h, m)
	}
}

func TestExternalizedPayloadIsPagedBack(t *testing.T) {
	c := &contentStore{data: bigPayload(600000), ref: "content_0123456789abcdef01234567"}
	h, m := runExternalized(t, c, nil)
	var r InterceptResult
	h.result(m, &r)
	if r.Reason != "len="+itoa(600000) {
		t.Fatalf("reason %q", r.Reason)
	}
	want := []int64{0, ContentRefChunkBytes, 2 * ContentRefChunkBytes}
	if len(c.readsSeen) != len(want) {
		t.Fatalf("reads at %v", c.readsSeen)
	}
	for i := range want {
		if c.readsSeen[i] != want[i] {
			t.Fatalf("reads at %v", c.readsSeen)
		}
	}
}

func TestUppercaseDigestIsAccepted(t *testing.T) {
	c := &contentStore{data: bigPayload(70000), ref: "content_x"}
	sum := sha256.Sum256(c.data)
	c.sha = strings.ToUpper(hex.EncodeToString(sum[:]))
	h, m := runExternalized(t, c, nil)
	var r InterceptResult
	h.result(m, &r)
}

func TestContentRefFailures(t *testing.T) {
	data := bigPayload(300000)
	cases := []struct {
		name   string
		store  *contentStore
		inline any
		reason ErrorReason
	}{
		{"hash mismatch", &contentStore{data: data, ref: "r", sha: strings.Repeat("0", 64)}, nil, ErrProtocolError},
		{"expired", &contentStore{data: data, ref: "r", expired: true}, nil, ErrContentRefExpired},
		{"inline and envelope", &contentStore{data: data, ref: "r"}, map[string]string{"text": "inline"}, ErrProtocolError},
		{"other ref echoed", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) { r["contentRef"] = "other" }}, nil, ErrProtocolError},
		{"other offset echoed", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) { r["offset"] = 7 }}, nil, ErrProtocolError},
		{"unknown encoding", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) { r["encoding"] = "latin1" }}, nil, ErrProtocolError},
		{"over object cap", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) { r["totalBytes"] = ContentRefObjectBytes + 1 }}, nil, ErrFrameTooLarge},
		{"no progress", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) {
			if _, more := r["nextOffset"]; more {
				r["nextOffset"] = r["offset"]
			}
		}}, nil, ErrProtocolError},
		{"short final length", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) {
			if _, more := r["nextOffset"]; !more {
				r["dataBase64"] = base64.StdEncoding.EncodeToString([]byte("x"))
			}
		}}, nil, ErrProtocolError},
		{"bad base64", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) { r["dataBase64"] = "!!" }}, nil, ErrProtocolError},
		{"unknown result member", &contentStore{data: data, ref: "r", mutate: func(r map[string]any) { r["extra"] = 1 }}, nil, ErrProtocolError},
		{"oversized chunk", &contentStore{data: data, ref: "r", chunk: ContentRefChunkBytes + 1}, nil, ErrProtocolError},
	}
	for _, c := range cases {
		h, m := runExternalized(t, c.store, c.inline)
		e := m.errorObj(t)
		if e.Data == nil || e.Data.Reason != c.reason {
			t.Fatalf("%s: answer %s; logs:\n%s", c.name, m.raw, h.logs.String())
		}
	}
}

func TestEnvelopeMustNameThePayloadPointer(t *testing.T) {
	c := &contentStore{data: bigPayload(1000), ref: "r"}
	h := startHost(t, testHandler{}, lengthInterceptor())
	h.handshake()
	p := externalizedIntercept(c, nil)
	p["externalized"].([]any)[0].(map[string]any)["jsonPointer"] = "/replacement"
	h.expectReason(h.call(MethodExtensionIntercept, p), CodeInvalidRequest, ErrProtocolError)
	p = externalizedIntercept(c, nil)
	p["externalized"] = append(p["externalized"].([]any), p["externalized"].([]any)[0])
	h.expectReason(h.call(MethodExtensionIntercept, p), CodeInvalidRequest, ErrProtocolError)
}

func TestResolveExternalizedPassesInlineValues(t *testing.T) {
	got := make(chan string, 1)
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"*": func(ctx context.Context, _ string, payload json.RawMessage) (*InterceptResult, error) {
			v, err := ResolveExternalized(ctx, json.RawMessage(`{"a":1}`), nil, "/payload")
			if err != nil {
				return nil, err
			}
			got <- string(v)
			return Continue(), nil
		},
	}})
	h.handshake()
	h.call(MethodExtensionIntercept, intercept("input.receive", 1))
	if v := <-got; v != `{"a":1}` {
		t.Fatalf("%s", v)
	}
	if _, err := ResolveExternalized(context.Background(), nil, nil, "/payload"); err != ErrNoConnection {
		t.Fatalf("%v", err)
	}
}
