package extension

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

var ErrNotReady = errors.New("extension: host connection is not initialized (wait for extension/initialized)")
var ErrNoConnection = errors.New("extension: no host connection in context (use the context passed to an SDK callback)")
var ErrUICancelled = errors.New("extension: the user dismissed the prompt")

// errorSpec is one row of the frozen error table (schema "errors").
type errorSpec struct {
	Code      int
	Retryable bool
	Message   string
}

// frozenErrors is generation A's table (28 reasons; B's 20 are a subset).
// The schema test compares it with both schema files.
var frozenErrors = map[ErrorReason]errorSpec{
	ErrActivationFailed:        {DomainErrorCode, false, "Component activation failed; the new generation was not published."},
	ErrBrowserCancelled:        {DomainErrorCode, false, "The browser call was cancelled by runtime drain, sidecar disconnect, or the caller."},
	ErrBrowserOriginMismatch:   {DomainErrorCode, false, "The tab origin does not match the expected origin."},
	ErrBrowserPermissionDenied: {DomainErrorCode, false, "The browser action was denied by a sensitive-field, permission, or human-input gate."},
	ErrBrowserStaleRef:         {DomainErrorCode, false, "The element ref is no longer valid after navigation."},
	ErrBrowserTabBusy:          {DomainErrorCode, true, "The tab, renderer, lease, or pending request limit is exhausted."},
	ErrBrowserTabNotFound:      {DomainErrorCode, false, "The tab does not exist or does not belong to this chat."},
	ErrBrowserTimeout:          {DomainErrorCode, true, "The browser wait or action timed out."},
	ErrBrowserUnavailable:      {DomainErrorCode, true, "The browser host API is unavailable or the companion cannot start."},
	ErrCapabilityNotDeclared:   {DomainErrorCode, false, "The extension used a capability its manifest did not declare."},
	ErrCleanupFailed:           {DomainErrorCode, true, "Component cleanup failed while disposing scoped effects."},
	ErrContentRefExpired:       {DomainErrorCode, true, "The referenced content has expired."},
	ErrDependencyCycle:         {DomainErrorCode, false, "The dependency graph contains a required cycle."},
	ErrDependencyUnsatisfied:   {DomainErrorCode, false, "A required dependency is missing or not version-compatible."},
	ErrFrameTooLarge:           {DomainErrorCode, false, "The frame exceeds the frozen protocol size limit."},
	ErrInterceptTimeout:        {DomainErrorCode, true, "The extension did not answer an intercept within its timeout."},
	ErrInternal:                {CodeInternal, true, "An internal extension protocol error occurred."},
	ErrInvalidParams:           {CodeInvalidParams, false, "The params do not match the registered method schema."},
	ErrProtocolError:           {CodeInvalidRequest, false, "The extension protocol frame or envelope is invalid."},
	ErrProviderFailed:          {DomainErrorCode, true, "The extension provider stream failed."},
	ErrProviderInterrupted:     {DomainErrorCode, true, "The extension provider stream was interrupted."},
	ErrSchemaMismatch:          {DomainErrorCode, false, "A capability schema hash does not match the expected pin."},
	ErrShutdownTimeout:         {DomainErrorCode, true, "The extension did not shut down within the requested timeout."},
	ErrStaleGeneration:         {DomainErrorCode, false, "The message belongs to a superseded runtime generation."},
	ErrStreamCancelled:         {DomainErrorCode, false, "The provider stream was cancelled."},
	ErrStreamGap:               {DomainErrorCode, true, "A provider stream chunk is missing from the ordered sequence."},
	ErrUnknownMethod:           {CodeMethodNotFound, false, "The method is not registered in Extension Protocol v2."},
	ErrUnsupportedVersion:      {DomainErrorCode, false, "The peer's extension protocol version is not supported."},
}

// ProtocolError is a structured protocol error. A handler may return one to
// choose the wire reason; Message crosses the wire verbatim (the frozen text
// is used when it is blank).
type ProtocolError struct {
	Reason  ErrorReason
	Message string
}

func (e *ProtocolError) Error() string {
	if e == nil {
		return ""
	}
	if strings.TrimSpace(e.Message) == "" {
		if spec, ok := frozenErrors[e.Reason]; ok {
			return spec.Message
		}
		return string(e.Reason)
	}
	return e.Message
}

// NewProtocolError returns the frozen error of a reason, or an error when the
// reason is not in the table.
func NewProtocolError(reason ErrorReason) (*ProtocolError, error) {
	spec, ok := frozenErrors[reason]
	if !ok {
		return nil, fmt.Errorf("extension: unknown error reason %q", reason)
	}
	return &ProtocolError{Reason: reason, Message: spec.Message}, nil
}

// MustProtocolError is NewProtocolError for reasons known to be frozen; it
// panics on an unknown reason (a programming error).
func MustProtocolError(reason ErrorReason) *ProtocolError {
	e, err := NewProtocolError(reason)
	if err != nil {
		panic(err)
	}
	return e
}

// Validate reports whether the data names a frozen reason with its frozen
// retryable flag.
func (d ProtocolErrorData) Validate() error {
	spec, ok := frozenErrors[d.Reason]
	if !ok {
		return fmt.Errorf("extension: unknown error reason %q", d.Reason)
	}
	if spec.Retryable != d.Retryable {
		return fmt.Errorf("extension: error reason %q must have retryable=%t", d.Reason, spec.Retryable)
	}
	return nil
}

// ResponseError is a JSON-RPC error answer from the host that carries no
// valid frozen reason (those are returned as *ProtocolError instead).
type ResponseError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *ResponseError) Error() string {
	return fmt.Sprintf("extension: host answered error %d: %s", e.Code, e.Message)
}

// FrameTooLargeError reports a frame over FrameBytes (newline included).
// Direction is "inbound" or "outbound". For an inbound frame Size is the
// number of bytes read when the limit was crossed, so it may be below the
// frame's full length.
type FrameTooLargeError struct {
	Direction string
	Size      int
	Limit     int
}

func (e *FrameTooLargeError) Error() string {
	return fmt.Sprintf("%s frame is %d bytes; limit is %d", e.Direction, e.Size, e.Limit)
}

// fatalError marks a handler failure after which the connection ends (a
// failed handshake leaves nothing to serve).
type fatalError struct{ err error }

func (e *fatalError) Error() string { return e.err.Error() }
func (e *fatalError) Unwrap() error { return e.err }

// wireError is the JSON-RPC error object.
type wireError struct {
	Code    int                `json:"code"`
	Message string             `json:"message"`
	Data    *ProtocolErrorData `json:"data,omitempty"`
}

func protocolWireError(reason ErrorReason, message string) wireError {
	spec := frozenErrors[reason]
	if strings.TrimSpace(message) == "" {
		message = spec.Message
	}
	return wireError{Code: spec.Code, Message: message, Data: &ProtocolErrorData{Reason: reason, Retryable: spec.Retryable}}
}

// toWireError maps a handler error to its answer. Only *ProtocolError (with
// a frozen reason) and *FrameTooLargeError choose the answer; anything else
// is the frozen internal error, so handler details never leak.
func toWireError(err error) wireError {
	var pe *ProtocolError
	if errors.As(err, &pe) && pe != nil {
		if _, ok := frozenErrors[pe.Reason]; ok {
			return protocolWireError(pe.Reason, pe.Message)
		}
	}
	var fe *FrameTooLargeError
	if errors.As(err, &fe) {
		return protocolWireError(ErrFrameTooLarge, "")
	}
	return protocolWireError(ErrInternal, "")
}

// mapCallError turns a host error answer with a valid frozen reason into a
// *ProtocolError; other answers stay *ResponseError.
func mapCallError(re *ResponseError) error {
	if len(re.Data) > 0 {
		var data ProtocolErrorData
		if err := strictDecode(re.Data, &data); err == nil && data.Validate() == nil {
			return &ProtocolError{Reason: data.Reason, Message: re.Message}
		}
	}
	return re
}
