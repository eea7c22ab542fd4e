package extension_test

// Generated once from ../shared/spec/GO_SDK_API.md: every upstream function
// and method, assigned to a variable of its exact upstream signature. A
// signature drift fails compilation of the tests.

import (
	"context"
	"encoding/json"

	extension "github.com/esengine/DeepSeek-Reasonix/sdk/go"
)

var (
	_ func(string) extension.StreamChunk                                                                                   = extension.TextChunk
	_ func(string, string) extension.StreamChunk                                                                           = extension.ReasoningChunk
	_ func(extension.ProviderUsage) extension.StreamChunk                                                                  = extension.UsageChunk
	_ func() extension.StreamChunk                                                                                         = extension.DoneChunk
	_ func(string) extension.StreamChunk                                                                                   = extension.ErrorChunk
	_ func() *extension.InterceptResult                                                                                    = extension.Continue
	_ func(string) *extension.InterceptResult                                                                              = extension.Block
	_ func(any) (*extension.InterceptResult, error)                                                                        = extension.Replace
	_ func() *extension.InterceptResult                                                                                    = extension.Allow
	_ func(string) *extension.InterceptResult                                                                              = extension.Deny
	_ func(context.Context, extension.Handler, extension.Options) error                                                    = extension.Serve
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.UIStatusPayload) error                     = (extension.HostUI).PublishStatus
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.UICardPayload) error                       = (extension.HostUI).PublishCard
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.UIFormPayload) error                       = (extension.HostUI).PublishForm
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.UINotificationPayload) error               = (extension.HostUI).PublishNotification
	_ func(extension.HostUI, context.Context, string, uint64, string, string) (bool, error)                                = (extension.HostUI).RequestConfirm
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.InputPrompt) (string, error)               = (extension.HostUI).RequestInput
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.SelectPrompt) (string, error)              = (extension.HostUI).RequestSelect
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.MultiSelectPrompt) ([]string, error)       = (extension.HostUI).RequestMultiSelect
	_ func(extension.HostUI, context.Context, string, uint64, string, extension.UIFormPayload) (map[string]any, error)     = (extension.HostUI).RequestForm
	_ func(extension.HostBrowser, context.Context) (extension.BrowserTabListResult, error)                                 = (extension.HostBrowser).List
	_ func(extension.HostBrowser, context.Context, string, extension.BrowserTabDisposition) (extension.BrowserTab, error)  = (extension.HostBrowser).Open
	_ func(extension.HostBrowser, context.Context, string, *int) (extension.BrowserTabSnapshotResult, error)               = (extension.HostBrowser).Snapshot
	_ func(extension.HostBrowser, context.Context, string, extension.BrowserWaitUntil, *int) (extension.BrowserTab, error) = (extension.HostBrowser).Wait
	_ func(extension.HostBrowser, context.Context, extension.BrowserTabActParams) (extension.BrowserTab, error)            = (extension.HostBrowser).Act
	_ func(context.Context, string) ([]byte, error)                                                                        = extension.ReadContentRef
	_ func(context.Context, json.RawMessage, []extension.ExternalizedField, string) (json.RawMessage, error)               = extension.ResolveExternalized
	_ func() []string                                                                                                      = extension.InterceptEvents
	_ func(extension.ProviderRequest) error                                                                                = (extension.ProviderRequest).Validate
	_ func(extension.ProviderChunk) error                                                                                  = (extension.ProviderChunk).Validate
	_ func(extension.StreamOpenParams) error                                                                               = (extension.StreamOpenParams).Validate
	_ func(extension.StreamChunkParams) error                                                                              = (extension.StreamChunkParams).Validate
	_ func(extension.ProtocolErrorData) error                                                                              = (extension.ProtocolErrorData).Validate
	_ func(*extension.ProtocolError) string                                                                                = (*extension.ProtocolError).Error
	_ func(extension.ErrorReason) (*extension.ProtocolError, error)                                                        = extension.NewProtocolError
	_ func(extension.ErrorReason) *extension.ProtocolError                                                                 = extension.MustProtocolError
	_ func(*extension.ResponseError) string                                                                                = (*extension.ResponseError).Error
	_ func(*extension.FrameTooLargeError) string                                                                           = (*extension.FrameTooLargeError).Error
)

var _ = json.RawMessage(nil)
var _ context.Context
