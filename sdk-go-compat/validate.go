package extension

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"strings"
)

// Closed enums: the strict decoder rejects any value not listed here for a
// field of one of these types. The schema test checks these sets against
// both schema files.
var enumValues = map[reflect.Type][]string{
	reflect.TypeOf(InterceptEvent("")): {
		"agent.before_start", "compaction.complete", "compaction.prepare", "context.prepare",
		"frontend.event", "input.receive", "permission.decision", "provider.request",
		"provider.response", "session.end", "session.load", "session.rotate", "session.save",
		"session.start", "system_prompt.build", "tool.after", "tool.before",
	},
	reflect.TypeOf(InterceptDecision("")):     {"allow", "block", "continue", "deny", "replace"},
	reflect.TypeOf(UIHostKind("")):            {"acp", "desktop", "headless", "tui"},
	reflect.TypeOf(ProviderChunkType("")):     {"done", "error", "reasoning", "text", "tool_call", "tool_call_args_delta", "tool_call_start", "usage"},
	reflect.TypeOf(ProviderErrorCode("")):     {"provider_failed", "provider_interrupted"},
	reflect.TypeOf(ProviderRole("")):          {"assistant", "system", "tool", "user"},
	reflect.TypeOf(BrowserActAction("")):      {"click", "hover", "press", "scroll", "select", "type"},
	reflect.TypeOf(BrowserTabDisposition("")): {"background", "foreground"},
	reflect.TypeOf(BrowserWaitUntil("")):      {"dom_content_loaded", "load", "navigation", "network_idle"},
	reflect.TypeOf(ContentEncoding("")):       {"utf8"},
	// Generation B's list (A lacks panel and view): a superset, so a host of
	// either generation is understood.
	reflect.TypeOf(UISurfaceKind("")): {"card", "form", "notification", "panel", "status", "view"},
	reflect.TypeOf(UIRequestKind("")): {"confirm", "input", "multiselect", "select"},
	reflect.TypeOf(UISeverity("")):    {"error", "info", "warn"},
	reflect.TypeOf(UIFieldKind("")):   {"confirm", "input", "multiselect", "select"},
	reflect.TypeOf(ErrorReason("")):   frozenReasonNames(),
}

func frozenReasonNames() []string {
	out := make([]string, 0, len(frozenErrors))
	for reason := range frozenErrors {
		out = append(out, string(reason))
	}
	sort.Strings(out)
	return out
}

func enumContains(t reflect.Type, value string) bool {
	for _, v := range enumValues[t] {
		if v == value {
			return true
		}
	}
	return false
}

// InterceptEvents returns the 17 hook point names, sorted.
func InterceptEvents() []string {
	values := enumValues[reflect.TypeOf(InterceptEvent(""))]
	out := make([]string, len(values))
	copy(out, values)
	sort.Strings(out)
	return out
}

func validInterceptEvent(e InterceptEvent) bool {
	return enumContains(reflect.TypeOf(e), string(e))
}

func validDecision(d InterceptDecision) bool {
	return enumContains(reflect.TypeOf(d), string(d))
}

func validSeverity(s UISeverity) bool {
	return s == "" || enumContains(reflect.TypeOf(s), string(s))
}

func validFieldKind(k UIFieldKind) bool {
	return enumContains(reflect.TypeOf(k), string(k))
}

// Validate checks the invariants of a provider request that tags cannot
// express: both arrays present, maxTokens >= 0, a non-blank response format
// type, and every tool's parameters a JSON object.
func (request ProviderRequest) Validate() error {
	if request.Messages == nil {
		return errors.New("extension: provider request messages must be an array")
	}
	if request.Tools == nil {
		return errors.New("extension: provider request tools must be an array")
	}
	if request.MaxTokens < 0 {
		return errors.New("extension: provider request maxTokens must be >= 0")
	}
	if request.ResponseFormat != nil && strings.TrimSpace(request.ResponseFormat.Type) == "" {
		return errors.New("extension: provider request responseFormat.type is required")
	}
	for i, tool := range request.Tools {
		if strings.TrimSpace(tool.Name) == "" {
			return errors.New("extension: provider request tool " + itoa(i) + " needs a name")
		}
		params := bytes.TrimSpace(tool.Parameters)
		if len(params) == 0 || params[0] != '{' || !json.Valid(params) {
			return errors.New("extension: provider request tool " + itoa(i) + " parameters must be a JSON object")
		}
	}
	return nil
}

// Validate checks one chunk: a registered type, argChars >= 0, an error
// object exactly on error chunks, usage on usage chunks, and a complete
// toolCall where one is carried.
func (chunk ProviderChunk) Validate() error {
	if !enumContains(reflect.TypeOf(chunk.Type), string(chunk.Type)) {
		return errors.New("extension: chunk type " + quote(string(chunk.Type)) + " is not registered")
	}
	if chunk.ArgChars < 0 {
		return errors.New("extension: chunk argChars must be >= 0")
	}
	if chunk.Type == ChunkError {
		if chunk.Error == nil {
			return errors.New("extension: an error chunk needs error")
		}
		if !enumContains(reflect.TypeOf(chunk.Error.Code), string(chunk.Error.Code)) {
			return errors.New("extension: chunk error code " + quote(string(chunk.Error.Code)) + " is not registered")
		}
		if strings.TrimSpace(chunk.Error.Message) == "" {
			return errors.New("extension: chunk error message is required")
		}
	} else if chunk.Error != nil {
		return errors.New("extension: only error chunks may carry error")
	}
	if chunk.Type == ChunkUsage {
		if chunk.Usage == nil {
			return errors.New("extension: a usage chunk needs usage")
		}
		u := chunk.Usage
		if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens < 0 ||
			u.CacheHitTokens < 0 || u.CacheMissTokens < 0 || u.ReasoningTokens < 0 {
			return errors.New("extension: usage token counts must be >= 0")
		}
	}
	if chunk.ToolCall != nil && (strings.TrimSpace(chunk.ToolCall.ID) == "" || strings.TrimSpace(chunk.ToolCall.Name) == "") {
		return errors.New("extension: chunk toolCall needs id and name")
	}
	return nil
}

// Validate checks the open params' identifiers, seqBase and request.
func (p StreamOpenParams) Validate() error {
	if strings.TrimSpace(p.StreamID) == "" {
		return errors.New("extension: stream open needs a streamId")
	}
	if strings.TrimSpace(p.ProviderRef) == "" {
		return errors.New("extension: stream open needs a providerRef")
	}
	if p.SeqBase < 0 {
		return errors.New("extension: stream open seqBase must be >= 0")
	}
	return p.Request.Validate()
}

// Validate checks a chunk notification: streamId, seq >= 1, and the chunk.
func (p StreamChunkParams) Validate() error {
	if strings.TrimSpace(p.StreamID) == "" {
		return errors.New("extension: stream chunk needs a streamId")
	}
	if p.Seq < 1 {
		return errors.New("extension: stream chunk seq must be >= 1")
	}
	return p.Chunk.Validate()
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func validSurfaceKind(k UISurfaceKind) bool {
	return enumContains(reflect.TypeOf(k), string(k))
}

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }
