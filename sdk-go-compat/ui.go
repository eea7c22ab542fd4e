package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

func (s *server) handleUIAction(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.opts.UI.Action == nil {
		return nil, MustProtocolError(ErrUnknownMethod)
	}
	var p UIActionParams
	if err := strictDecode(raw, &p); err != nil {
		s.log.Printf("extension: invalid ui/action params: %v", err)
		return nil, MustProtocolError(ErrInvalidParams)
	}
	if err := s.opts.UI.Action(ctx, p.ActionID, p.Args); err != nil {
		return UIActionResult{Accepted: false, Message: err.Error()}, nil
	}
	return UIActionResult{Accepted: true}, nil
}

func (s *server) handleUISubmit(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.opts.UI.Submit == nil {
		return nil, MustProtocolError(ErrUnknownMethod)
	}
	var p UISubmitParams
	if err := strictDecode(raw, &p); err != nil {
		s.log.Printf("extension: invalid ui/submit params: %v", err)
		return nil, MustProtocolError(ErrInvalidParams)
	}
	if err := s.opts.UI.Submit(ctx, p.SurfaceID, p.Values); err != nil {
		s.log.Printf("extension: UI submit for surface %q failed: %v", p.SurfaceID, err)
		return UISubmitResult{Accepted: false}, nil
	}
	return UISubmitResult{Accepted: true}, nil
}

// HostUI is the client for the host's structured UI. Its methods take the
// context of an SDK callback (ErrNoConnection otherwise) and fail with
// ErrNotReady before the handshake barrier opens.
type HostUI struct{}

// answerKey is the field key of the single-question prompts.
const answerKey = "value"

func (HostUI) PublishStatus(ctx context.Context, sessionID string, generation uint64, surfaceID string, p UIStatusPayload) error {
	if strings.TrimSpace(p.Label) == "" {
		return errors.New("extension: a status surface needs a label")
	}
	if !validSeverity(p.Severity) {
		return fmt.Errorf("extension: unknown severity %q", p.Severity)
	}
	return publish(ctx, sessionID, generation, surfaceID, UISurfaceStatus, p)
}

func (HostUI) PublishCard(ctx context.Context, sessionID string, generation uint64, surfaceID string, p UICardPayload) error {
	for i, f := range p.Fields {
		if strings.TrimSpace(f.Key) == "" {
			return fmt.Errorf("extension: card field %d needs a key", i)
		}
	}
	for i, a := range p.Actions {
		if strings.TrimSpace(a.ActionID) == "" || strings.TrimSpace(a.Label) == "" {
			return fmt.Errorf("extension: card action %d needs an actionId and a label", i)
		}
	}
	return publish(ctx, sessionID, generation, surfaceID, UISurfaceCard, p)
}

func (HostUI) PublishForm(ctx context.Context, sessionID string, generation uint64, surfaceID string, p UIFormPayload) error {
	if err := checkForm(p); err != nil {
		return err
	}
	return publish(ctx, sessionID, generation, surfaceID, UISurfaceForm, p)
}

func (HostUI) PublishNotification(ctx context.Context, sessionID string, generation uint64, surfaceID string, p UINotificationPayload) error {
	if strings.TrimSpace(p.Title) == "" {
		return errors.New("extension: a notification needs a title")
	}
	if !validSeverity(p.Severity) {
		return fmt.Errorf("extension: unknown severity %q", p.Severity)
	}
	return publish(ctx, sessionID, generation, surfaceID, UISurfaceNotification, p)
}

// PublishSurface (not upstream) publishes any surface kind with a caller
// built payload, for the generation-B panel and view kinds whose payload
// DTOs upstream does not publish. The host decodes the payload strictly by
// kind.
func (HostUI) PublishSurface(ctx context.Context, sessionID string, generation uint64, surfaceID string, kind UISurfaceKind, payload any) error {
	if !validSurfaceKind(kind) {
		return fmt.Errorf("extension: unknown surface kind %q", kind)
	}
	return publish(ctx, sessionID, generation, surfaceID, kind, payload)
}

func publish(ctx context.Context, sessionID string, generation uint64, surfaceID string, kind UISurfaceKind, payload any) error {
	s := serverFrom(ctx)
	if s == nil {
		return ErrNoConnection
	}
	if strings.TrimSpace(surfaceID) == "" || strings.TrimSpace(sessionID) == "" {
		return errors.New("extension: surfaceId and sessionId are required")
	}
	raw, err := marshalPayload(payload)
	if err != nil {
		return fmt.Errorf("extension: marshal %s payload: %w", kind, err)
	}
	answer, err := s.callHost(ctx, MethodHostUIPublish, UIPublishParams{
		SurfaceID: surfaceID, SessionID: sessionID, Generation: generation, Kind: kind, Payload: raw,
	})
	if err != nil {
		return err
	}
	var result UIPublishResult
	if err := strictDecode(answer, &result); err != nil {
		return &ProtocolError{Reason: ErrProtocolError, Message: "invalid host/ui/publish result"}
	}
	if !result.Accepted {
		return fmt.Errorf("extension: the host did not accept the %s surface %q", kind, surfaceID)
	}
	return nil
}

func marshalPayload(payload any) (json.RawMessage, error) {
	switch v := payload.(type) {
	case json.RawMessage:
		if !json.Valid(v) {
			return nil, errors.New("not valid JSON")
		}
		return v, nil
	default:
		return json.Marshal(payload)
	}
}

func checkForm(p UIFormPayload) error {
	if p.Fields == nil {
		return errors.New("extension: a form needs a fields array (it may be empty)")
	}
	for i, f := range p.Fields {
		if strings.TrimSpace(f.Key) == "" {
			return fmt.Errorf("extension: form field %d needs a key", i)
		}
		if !validFieldKind(f.Kind) {
			return fmt.Errorf("extension: form field %q has the unknown kind %q", f.Key, f.Kind)
		}
	}
	return nil
}

type InputPrompt struct {
	Title    string
	Message  string
	Label    string
	Default  string
	Required bool
}

type SelectPrompt struct {
	Title    string
	Message  string
	Label    string
	Options  []string
	Default  string
	Required bool
}

type MultiSelectPrompt struct {
	Title    string
	Message  string
	Label    string
	Options  []string
	Required bool
}

func (h HostUI) RequestConfirm(ctx context.Context, sessionID string, generation uint64, surfaceID, message string) (bool, error) {
	values, err := h.request(ctx, sessionID, generation, surfaceID, UIRequestConfirm, UIFormPayload{
		Message: message,
		Fields:  []UIFormField{{Key: answerKey, Label: message, Kind: UIFieldConfirm}},
	})
	if err != nil {
		return false, err
	}
	switch v := values[answerKey].(type) {
	case bool:
		return v, nil
	case nil:
		return false, nil
	default:
		return false, &ProtocolError{Reason: ErrProtocolError, Message: "host/ui/request confirm answer is not a boolean"}
	}
}

func (h HostUI) RequestInput(ctx context.Context, sessionID string, generation uint64, surfaceID string, p InputPrompt) (string, error) {
	field := UIFormField{Key: answerKey, Label: p.Label, Kind: UIFieldInput, Required: p.Required}
	if p.Default != "" {
		field.Default = p.Default
	}
	values, err := h.request(ctx, sessionID, generation, surfaceID, UIRequestInput, UIFormPayload{
		Title: p.Title, Message: p.Message, Fields: []UIFormField{field},
	})
	if err != nil {
		return "", err
	}
	return stringAnswer(values, "input")
}

func (h HostUI) RequestSelect(ctx context.Context, sessionID string, generation uint64, surfaceID string, p SelectPrompt) (string, error) {
	if len(p.Options) == 0 {
		return "", errors.New("extension: a select prompt needs options")
	}
	field := UIFormField{Key: answerKey, Label: p.Label, Kind: UIFieldSelect, Options: p.Options, Required: p.Required}
	if p.Default != "" {
		field.Default = p.Default
	}
	values, err := h.request(ctx, sessionID, generation, surfaceID, UIRequestSelect, UIFormPayload{
		Title: p.Title, Message: p.Message, Fields: []UIFormField{field},
	})
	if err != nil {
		return "", err
	}
	return stringAnswer(values, "select")
}

func (h HostUI) RequestMultiSelect(ctx context.Context, sessionID string, generation uint64, surfaceID string, p MultiSelectPrompt) ([]string, error) {
	if len(p.Options) == 0 {
		return nil, errors.New("extension: a multiselect prompt needs options")
	}
	field := UIFormField{Key: answerKey, Label: p.Label, Kind: UIFieldMultiselect, Options: p.Options, Required: p.Required}
	values, err := h.request(ctx, sessionID, generation, surfaceID, UIRequestMultiselect, UIFormPayload{
		Title: p.Title, Message: p.Message, Fields: []UIFormField{field},
	})
	if err != nil {
		return nil, err
	}
	notList := &ProtocolError{Reason: ErrProtocolError, Message: "host/ui/request multiselect answer is not a string list"}
	switch v := values[answerKey].(type) {
	case nil:
		return []string{}, nil
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			text, ok := item.(string)
			if !ok {
				return nil, notList
			}
			out = append(out, text)
		}
		return out, nil
	default:
		return nil, notList
	}
}

// RequestForm asks a whole form (sent with request kind "input", as
// upstream does) and returns the values by field key.
func (h HostUI) RequestForm(ctx context.Context, sessionID string, generation uint64, surfaceID string, form UIFormPayload) (map[string]any, error) {
	if err := checkForm(form); err != nil {
		return nil, err
	}
	return h.request(ctx, sessionID, generation, surfaceID, UIRequestInput, form)
}

func stringAnswer(values map[string]any, kind string) (string, error) {
	switch v := values[answerKey].(type) {
	case string:
		return v, nil
	case nil:
		return "", nil
	default:
		return "", &ProtocolError{Reason: ErrProtocolError, Message: "host/ui/request " + kind + " answer is not a string"}
	}
}

func (HostUI) request(ctx context.Context, sessionID string, generation uint64, surfaceID string, kind UIRequestKind, form UIFormPayload) (map[string]any, error) {
	s := serverFrom(ctx)
	if s == nil {
		return nil, ErrNoConnection
	}
	if strings.TrimSpace(surfaceID) == "" || strings.TrimSpace(sessionID) == "" {
		return nil, errors.New("extension: surfaceId and sessionId are required")
	}
	raw, err := json.Marshal(form)
	if err != nil {
		return nil, fmt.Errorf("extension: marshal %s prompt: %w", kind, err)
	}
	answer, err := s.callHost(ctx, MethodHostUIRequest, UIRequestParams{
		SurfaceID: surfaceID, SessionID: sessionID, Generation: generation, Kind: kind, Payload: raw,
	})
	if err != nil {
		return nil, err
	}
	var result UIRequestResult
	if err := strictDecode(answer, &result); err != nil {
		return nil, &ProtocolError{Reason: ErrProtocolError, Message: "invalid host/ui/request result"}
	}
	if result.Cancelled {
		return nil, ErrUICancelled
	}
	if result.Values == nil {
		result.Values = map[string]any{}
	}
	return result.Values, nil
}
