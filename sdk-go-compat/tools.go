package extension

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ToolFunc serves one generation-B tool (not upstream). arguments is the
// host's JSON as sent (it may be null). A returned error that is not a
// *ProtocolError becomes {content: err.Error(), isError: true}: the tool
// reports its own failure to the model. A *ProtocolError becomes a
// JSON-RPC error instead (the call could not run at all). A nil result is
// an empty, successful content.
type ToolFunc func(ctx context.Context, arguments json.RawMessage) (*ToolCallResult, error)

// ToolText is a successful tool result.
func ToolText(content string) *ToolCallResult { return &ToolCallResult{Content: content} }

// ToolError is a tool result that reports the tool's own failure.
func ToolError(content string) *ToolCallResult {
	return &ToolCallResult{Content: content, IsError: true}
}

func (s *server) handleToolCall(ctx context.Context, raw json.RawMessage) (any, error) {
	if len(s.opts.Tools) == 0 {
		return nil, MustProtocolError(ErrUnknownMethod)
	}
	var p ToolCallParams
	if err := strictDecode(raw, &p); err != nil {
		s.log.Printf("extension: invalid tool/call params: %v", err)
		return nil, MustProtocolError(ErrInvalidParams)
	}
	fn := s.opts.Tools[p.Name]
	if fn == nil {
		s.log.Printf("extension: the host called the unknown tool %q", p.Name)
		return nil, MustProtocolError(ErrUnknownMethod)
	}
	if p.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	result, err := fn(ctx, p.Arguments)
	if err != nil {
		var pe *ProtocolError
		if errors.As(err, &pe) {
			return nil, err
		}
		return &ToolCallResult{Content: err.Error(), IsError: true}, nil
	}
	if result == nil {
		return &ToolCallResult{}, nil
	}
	return result, nil
}
