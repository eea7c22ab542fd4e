package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

func Continue() *InterceptResult { return &InterceptResult{Decision: DecisionContinue} }

func Block(reason string) *InterceptResult {
	return &InterceptResult{Decision: DecisionBlock, Reason: reason}
}

// Replace substitutes the payload: a json.RawMessage or []byte is used as
// is (it must be valid JSON), anything else is marshalled. The replacement
// is sent inline, so it must fit in one frame.
func Replace(payload any) (*InterceptResult, error) {
	var raw json.RawMessage
	switch v := payload.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("extension: marshal replacement: %w", err)
		}
		raw = b
	}
	if !json.Valid(raw) {
		return nil, errors.New("extension: replacement is not valid JSON")
	}
	return &InterceptResult{Decision: DecisionReplace, Replacement: raw}, nil
}

func Allow() *InterceptResult { return &InterceptResult{Decision: DecisionAllow} }

func Deny(reason string) *InterceptResult {
	return &InterceptResult{Decision: DecisionDeny, Reason: reason}
}

func (s *server) handleIntercept(ctx context.Context, raw json.RawMessage) (any, error) {
	var p InterceptParams
	if err := strictDecode(raw, &p); err != nil {
		s.log.Printf("extension: invalid intercept params: %v", err)
		return nil, MustProtocolError(ErrInvalidParams)
	}
	payload, err := resolveExternalized(ctx, p.Payload, p.Externalized, "/payload")
	if err != nil {
		return nil, err
	}
	fn := s.opts.Interceptors[string(p.Event)]
	if fn == nil {
		fn = s.opts.Interceptors["*"]
	}
	if fn == nil {
		return Continue(), nil
	}
	if p.TimeoutMillis > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(p.TimeoutMillis)*time.Millisecond)
		defer cancel()
	}
	result, err := fn(ctx, string(p.Event), payload)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, MustProtocolError(ErrInterceptTimeout)
		}
		return nil, err
	}
	if result == nil {
		return Continue(), nil
	}
	if !validDecision(result.Decision) {
		return nil, fmt.Errorf("extension: the interceptor for %q returned the unknown decision %q", p.Event, result.Decision)
	}
	return result, nil
}

func (s *server) handleEvent(ctx context.Context, raw json.RawMessage) {
	var p EventParams
	if err := strictDecode(raw, &p); err != nil {
		s.log.Printf("extension: dropping a malformed extension/event: %v", err)
		return
	}
	payload, err := resolveExternalized(ctx, p.Payload, p.Externalized, "/payload")
	if err != nil {
		s.log.Printf("extension: dropping event %q: %v", p.Event, err)
		return
	}
	if s.opts.Observer != nil {
		s.opts.Observer(ctx, string(p.Event), payload)
	}
}

func (s *server) handleResourcesChanged(ctx context.Context, raw json.RawMessage) {
	var p ResourcesChangedParams
	if err := strictDecode(raw, &p); err != nil {
		s.log.Printf("extension: dropping a malformed extension/resources/changed: %v", err)
		return
	}
	if s.opts.ResourcesChanged != nil {
		s.opts.ResourcesChanged(ctx, p.Paths)
	}
}
