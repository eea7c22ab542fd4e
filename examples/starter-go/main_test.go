package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestBuiltBinaryAgainstAScriptedHost builds the sidecar exactly as the
// README says and drives it over its stdin/stdout like the host would.
func TestBuiltBinaryAgainstAScriptedHost(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		if goTool, err = exec.LookPath("go"); err != nil {
			t.Fatalf("no go tool to build the sidecar: %v", err)
		}
	}
	bin := filepath.Join(t.TempDir(), "bin", "starter-go")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOSUMDB=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	cmd := exec.Command(bin)
	stdin, _ := cmd.StdinPipe()
	stdoutPipe, _ := cmd.StdoutPipe()
	var stderr syncedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan map[string]json.RawMessage, 16)
	go func() {
		defer close(lines)
		r := bufio.NewReader(stdoutPipe)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var m map[string]json.RawMessage
				if json.Unmarshal(line, &m) != nil {
					t.Errorf("invalid frame %q", line)
				}
				lines <- m
			}
			if err != nil {
				return
			}
		}
	}()
	send := func(v any) {
		b, _ := json.Marshal(v)
		if _, err := stdin.Write(append(b, '\n')); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	next := func() map[string]json.RawMessage {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("sidecar closed stdout; stderr:\n%s", stderr.String())
			}
			return m
		case <-time.After(30 * time.Second): // safety net only
			t.Fatalf("no answer; stderr:\n%s", stderr.String())
		}
		return nil
	}

	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "extension/initialize", "params": map[string]any{
		"protocolId": "reasonix.extension.v2", "protocolVersion": "2",
		"manifest":     map[string]any{"intercepts": []string{"input.receive"}, "capabilities": []string{"interceptors"}},
		"session":      map[string]any{"sessionId": "s1", "workspaceRoot": "/w", "generation": 1},
		"capabilities": map[string]any{"contentRefs": true, "uiHost": "headless", "protocolVersion": "2"},
	}})
	var init struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Name            string   `json:"name"`
		Subscriptions   []string `json:"subscriptions"`
	}
	m := next()
	if err := json.Unmarshal(m["result"], &init); err != nil || init.ProtocolVersion != "2" || init.Name != "starter-go" ||
		len(init.Subscriptions) != 1 || init.Subscriptions[0] != "input.receive" {
		t.Fatalf("initialize answer %v", m)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "extension/initialized", "params": map[string]any{}})

	for i, c := range []struct{ in, decision, replacement string }{
		{"hello", "replace", `{"text":"[go] hello"}`},
		{"[go] already", "continue", ""},
		{"   ", "continue", ""},
	} {
		send(map[string]any{"jsonrpc": "2.0", "id": 10 + i, "method": "extension/intercept", "params": map[string]any{
			"event": "input.receive", "seq": i + 1, "payload": map[string]string{"text": c.in}, "timeoutMillis": 5000,
		}})
		var r struct {
			Decision    string          `json:"decision"`
			Replacement json.RawMessage `json:"replacement"`
		}
		m := next()
		if err := json.Unmarshal(m["result"], &r); err != nil || r.Decision != c.decision || string(r.Replacement) != c.replacement {
			t.Fatalf("input %q: answer %v", c.in, m)
		}
	}

	send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "extension/shutdown", "params": map[string]any{"timeoutMillis": 1000}})
	if m := next(); string(m["result"]) != `{"accepted":true}` {
		t.Fatalf("shutdown answer %v", m)
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("sidecar exit: %v; stderr:\n%s", err, stderr.String())
	}
}

type syncedBuffer struct {
	mu   sync.Mutex
	data []byte
}

func (b *syncedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.data = append(b.data, p...)
	return len(p), nil
}

func (b *syncedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.data)
}
