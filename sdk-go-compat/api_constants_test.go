package extension_test

import (
	"fmt"
	"strconv"
	"testing"

	extension "github.com/esengine/DeepSeek-Reasonix/sdk/go"
)

// Generated once from ../shared/spec/GO_SDK_API.md: every upstream constant
// with its type and value, and the sentinel errors' texts.
var upstreamConstants = []struct {
	name    string
	value   any
	typ     string // "" for untyped constants
	literal string
}{
	{"ProtocolID", extension.ProtocolID, "", `"reasonix.extension.v2"`},
	{"ProtocolMajor", extension.ProtocolMajor, "", `2`},
	{"ProtocolVersion", extension.ProtocolVersion, "", `"2"`},
	{"FrameBytes", extension.FrameBytes, "", `8388608`},
	{"ExternalizeFieldBytes", extension.ExternalizeFieldBytes, "", `65536`},
	{"ContentRefChunkBytes", extension.ContentRefChunkBytes, "", `262144`},
	{"ContentRefObjectBytes", extension.ContentRefObjectBytes, "", `8388608`},
	{"MethodExtensionEvent", extension.MethodExtensionEvent, "", `"extension/event"`},
	{"MethodExtensionInitialize", extension.MethodExtensionInitialize, "", `"extension/initialize"`},
	{"MethodExtensionInitialized", extension.MethodExtensionInitialized, "", `"extension/initialized"`},
	{"MethodExtensionIntercept", extension.MethodExtensionIntercept, "", `"extension/intercept"`},
	{"MethodExtensionProviderCatalog", extension.MethodExtensionProviderCatalog, "", `"extension/provider/catalog"`},
	{"MethodExtensionProviderStreamCancel", extension.MethodExtensionProviderStreamCancel, "", `"extension/provider/stream/cancel"`},
	{"MethodExtensionProviderStreamChunk", extension.MethodExtensionProviderStreamChunk, "", `"extension/provider/stream/chunk"`},
	{"MethodExtensionProviderStreamEnd", extension.MethodExtensionProviderStreamEnd, "", `"extension/provider/stream/end"`},
	{"MethodExtensionProviderStreamOpen", extension.MethodExtensionProviderStreamOpen, "", `"extension/provider/stream/open"`},
	{"MethodExtensionResourcesChanged", extension.MethodExtensionResourcesChanged, "", `"extension/resources/changed"`},
	{"MethodExtensionShutdown", extension.MethodExtensionShutdown, "", `"extension/shutdown"`},
	{"MethodExtensionUIAction", extension.MethodExtensionUIAction, "", `"extension/ui/action"`},
	{"MethodExtensionUISubmit", extension.MethodExtensionUISubmit, "", `"extension/ui/submit"`},
	{"MethodHostBrowserTabAct", extension.MethodHostBrowserTabAct, "", `"host/browser/tab/act"`},
	{"MethodHostBrowserTabList", extension.MethodHostBrowserTabList, "", `"host/browser/tab/list"`},
	{"MethodHostBrowserTabOpen", extension.MethodHostBrowserTabOpen, "", `"host/browser/tab/open"`},
	{"MethodHostBrowserTabSnapshot", extension.MethodHostBrowserTabSnapshot, "", `"host/browser/tab/snapshot"`},
	{"MethodHostBrowserTabWait", extension.MethodHostBrowserTabWait, "", `"host/browser/tab/wait"`},
	{"MethodHostContentRead", extension.MethodHostContentRead, "", `"host/content/read"`},
	{"MethodHostUIPublish", extension.MethodHostUIPublish, "", `"host/ui/publish"`},
	{"MethodHostUIRequest", extension.MethodHostUIRequest, "", `"host/ui/request"`},
	{"DomainErrorCode", extension.DomainErrorCode, "", `-32000`},
	{"EventAgentBeforeStart", extension.EventAgentBeforeStart, "extension.InterceptEvent", `"agent.before_start"`},
	{"EventCompactionComplete", extension.EventCompactionComplete, "extension.InterceptEvent", `"compaction.complete"`},
	{"EventCompactionPrepare", extension.EventCompactionPrepare, "extension.InterceptEvent", `"compaction.prepare"`},
	{"EventContextPrepare", extension.EventContextPrepare, "extension.InterceptEvent", `"context.prepare"`},
	{"EventFrontendEvent", extension.EventFrontendEvent, "extension.InterceptEvent", `"frontend.event"`},
	{"EventInputReceive", extension.EventInputReceive, "extension.InterceptEvent", `"input.receive"`},
	{"EventPermissionDecision", extension.EventPermissionDecision, "extension.InterceptEvent", `"permission.decision"`},
	{"EventProviderRequest", extension.EventProviderRequest, "extension.InterceptEvent", `"provider.request"`},
	{"EventProviderResponse", extension.EventProviderResponse, "extension.InterceptEvent", `"provider.response"`},
	{"EventSessionEnd", extension.EventSessionEnd, "extension.InterceptEvent", `"session.end"`},
	{"EventSessionLoad", extension.EventSessionLoad, "extension.InterceptEvent", `"session.load"`},
	{"EventSessionRotate", extension.EventSessionRotate, "extension.InterceptEvent", `"session.rotate"`},
	{"EventSessionSave", extension.EventSessionSave, "extension.InterceptEvent", `"session.save"`},
	{"EventSessionStart", extension.EventSessionStart, "extension.InterceptEvent", `"session.start"`},
	{"EventSystemPromptBuild", extension.EventSystemPromptBuild, "extension.InterceptEvent", `"system_prompt.build"`},
	{"EventToolAfter", extension.EventToolAfter, "extension.InterceptEvent", `"tool.after"`},
	{"EventToolBefore", extension.EventToolBefore, "extension.InterceptEvent", `"tool.before"`},
	{"UIHostTUI", extension.UIHostTUI, "extension.UIHostKind", `"tui"`},
	{"UIHostDesktop", extension.UIHostDesktop, "extension.UIHostKind", `"desktop"`},
	{"UIHostACP", extension.UIHostACP, "extension.UIHostKind", `"acp"`},
	{"UIHostHeadless", extension.UIHostHeadless, "extension.UIHostKind", `"headless"`},
	{"DecisionContinue", extension.DecisionContinue, "extension.InterceptDecision", `"continue"`},
	{"DecisionBlock", extension.DecisionBlock, "extension.InterceptDecision", `"block"`},
	{"DecisionReplace", extension.DecisionReplace, "extension.InterceptDecision", `"replace"`},
	{"DecisionAllow", extension.DecisionAllow, "extension.InterceptDecision", `"allow"`},
	{"DecisionDeny", extension.DecisionDeny, "extension.InterceptDecision", `"deny"`},
	{"ChunkText", extension.ChunkText, "extension.ProviderChunkType", `"text"`},
	{"ChunkReasoning", extension.ChunkReasoning, "extension.ProviderChunkType", `"reasoning"`},
	{"ChunkToolCallStart", extension.ChunkToolCallStart, "extension.ProviderChunkType", `"tool_call_start"`},
	{"ChunkToolCallDelta", extension.ChunkToolCallDelta, "extension.ProviderChunkType", `"tool_call_args_delta"`},
	{"ChunkToolCall", extension.ChunkToolCall, "extension.ProviderChunkType", `"tool_call"`},
	{"ChunkUsage", extension.ChunkUsage, "extension.ProviderChunkType", `"usage"`},
	{"ChunkDone", extension.ChunkDone, "extension.ProviderChunkType", `"done"`},
	{"ChunkError", extension.ChunkError, "extension.ProviderChunkType", `"error"`},
	{"ProviderFailed", extension.ProviderFailed, "extension.ProviderErrorCode", `"provider_failed"`},
	{"ProviderInterrupted", extension.ProviderInterrupted, "extension.ProviderErrorCode", `"provider_interrupted"`},
	{"ProviderRoleSystem", extension.ProviderRoleSystem, "extension.ProviderRole", `"system"`},
	{"ProviderRoleUser", extension.ProviderRoleUser, "extension.ProviderRole", `"user"`},
	{"ProviderRoleAssistant", extension.ProviderRoleAssistant, "extension.ProviderRole", `"assistant"`},
	{"ProviderRoleTool", extension.ProviderRoleTool, "extension.ProviderRole", `"tool"`},
	{"BrowserActClick", extension.BrowserActClick, "extension.BrowserActAction", `"click"`},
	{"BrowserActHover", extension.BrowserActHover, "extension.BrowserActAction", `"hover"`},
	{"BrowserActScroll", extension.BrowserActScroll, "extension.BrowserActAction", `"scroll"`},
	{"BrowserActType", extension.BrowserActType, "extension.BrowserActAction", `"type"`},
	{"BrowserActPress", extension.BrowserActPress, "extension.BrowserActAction", `"press"`},
	{"BrowserActSelect", extension.BrowserActSelect, "extension.BrowserActAction", `"select"`},
	{"BrowserDispositionForeground", extension.BrowserDispositionForeground, "extension.BrowserTabDisposition", `"foreground"`},
	{"BrowserDispositionBackground", extension.BrowserDispositionBackground, "extension.BrowserTabDisposition", `"background"`},
	{"BrowserWaitLoad", extension.BrowserWaitLoad, "extension.BrowserWaitUntil", `"load"`},
	{"BrowserWaitNetworkIdle", extension.BrowserWaitNetworkIdle, "extension.BrowserWaitUntil", `"network_idle"`},
	{"BrowserWaitDomContentLoaded", extension.BrowserWaitDomContentLoaded, "extension.BrowserWaitUntil", `"dom_content_loaded"`},
	{"BrowserWaitNavigation", extension.BrowserWaitNavigation, "extension.BrowserWaitUntil", `"navigation"`},
	{"ContentUTF8", extension.ContentUTF8, "extension.ContentEncoding", `"utf8"`},
	{"UISurfaceStatus", extension.UISurfaceStatus, "extension.UISurfaceKind", `"status"`},
	{"UISurfaceCard", extension.UISurfaceCard, "extension.UISurfaceKind", `"card"`},
	{"UISurfaceForm", extension.UISurfaceForm, "extension.UISurfaceKind", `"form"`},
	{"UISurfaceNotification", extension.UISurfaceNotification, "extension.UISurfaceKind", `"notification"`},
	{"UIRequestConfirm", extension.UIRequestConfirm, "extension.UIRequestKind", `"confirm"`},
	{"UIRequestInput", extension.UIRequestInput, "extension.UIRequestKind", `"input"`},
	{"UIRequestSelect", extension.UIRequestSelect, "extension.UIRequestKind", `"select"`},
	{"UIRequestMultiselect", extension.UIRequestMultiselect, "extension.UIRequestKind", `"multiselect"`},
	{"UISeverityInfo", extension.UISeverityInfo, "extension.UISeverity", `"info"`},
	{"UISeverityWarn", extension.UISeverityWarn, "extension.UISeverity", `"warn"`},
	{"UISeverityError", extension.UISeverityError, "extension.UISeverity", `"error"`},
	{"UIFieldConfirm", extension.UIFieldConfirm, "extension.UIFieldKind", `"confirm"`},
	{"UIFieldInput", extension.UIFieldInput, "extension.UIFieldKind", `"input"`},
	{"UIFieldSelect", extension.UIFieldSelect, "extension.UIFieldKind", `"select"`},
	{"UIFieldMultiselect", extension.UIFieldMultiselect, "extension.UIFieldKind", `"multiselect"`},
	{"ErrActivationFailed", extension.ErrActivationFailed, "extension.ErrorReason", `"activation_failed"`},
	{"ErrBrowserCancelled", extension.ErrBrowserCancelled, "extension.ErrorReason", `"browser_cancelled"`},
	{"ErrBrowserOriginMismatch", extension.ErrBrowserOriginMismatch, "extension.ErrorReason", `"browser_origin_mismatch"`},
	{"ErrBrowserPermissionDenied", extension.ErrBrowserPermissionDenied, "extension.ErrorReason", `"browser_permission_denied"`},
	{"ErrBrowserStaleRef", extension.ErrBrowserStaleRef, "extension.ErrorReason", `"browser_stale_ref"`},
	{"ErrBrowserTabBusy", extension.ErrBrowserTabBusy, "extension.ErrorReason", `"browser_tab_busy"`},
	{"ErrBrowserTabNotFound", extension.ErrBrowserTabNotFound, "extension.ErrorReason", `"browser_tab_not_found"`},
	{"ErrBrowserTimeout", extension.ErrBrowserTimeout, "extension.ErrorReason", `"browser_timeout"`},
	{"ErrBrowserUnavailable", extension.ErrBrowserUnavailable, "extension.ErrorReason", `"browser_unavailable"`},
	{"ErrCapabilityNotDeclared", extension.ErrCapabilityNotDeclared, "extension.ErrorReason", `"capability_not_declared"`},
	{"ErrCleanupFailed", extension.ErrCleanupFailed, "extension.ErrorReason", `"cleanup_failed"`},
	{"ErrContentRefExpired", extension.ErrContentRefExpired, "extension.ErrorReason", `"content_ref_expired"`},
	{"ErrDependencyCycle", extension.ErrDependencyCycle, "extension.ErrorReason", `"dependency_cycle"`},
	{"ErrDependencyUnsatisfied", extension.ErrDependencyUnsatisfied, "extension.ErrorReason", `"dependency_unsatisfied"`},
	{"ErrFrameTooLarge", extension.ErrFrameTooLarge, "extension.ErrorReason", `"frame_too_large"`},
	{"ErrInterceptTimeout", extension.ErrInterceptTimeout, "extension.ErrorReason", `"intercept_timeout"`},
	{"ErrInternal", extension.ErrInternal, "extension.ErrorReason", `"internal"`},
	{"ErrInvalidParams", extension.ErrInvalidParams, "extension.ErrorReason", `"invalid_params"`},
	{"ErrProtocolError", extension.ErrProtocolError, "extension.ErrorReason", `"protocol_error"`},
	{"ErrProviderFailed", extension.ErrProviderFailed, "extension.ErrorReason", `"provider_failed"`},
	{"ErrProviderInterrupted", extension.ErrProviderInterrupted, "extension.ErrorReason", `"provider_interrupted"`},
	{"ErrSchemaMismatch", extension.ErrSchemaMismatch, "extension.ErrorReason", `"schema_mismatch"`},
	{"ErrShutdownTimeout", extension.ErrShutdownTimeout, "extension.ErrorReason", `"shutdown_timeout"`},
	{"ErrStaleGeneration", extension.ErrStaleGeneration, "extension.ErrorReason", `"stale_generation"`},
	{"ErrStreamCancelled", extension.ErrStreamCancelled, "extension.ErrorReason", `"stream_cancelled"`},
	{"ErrStreamGap", extension.ErrStreamGap, "extension.ErrorReason", `"stream_gap"`},
	{"ErrUnknownMethod", extension.ErrUnknownMethod, "extension.ErrorReason", `"unknown_method"`},
	{"ErrUnsupportedVersion", extension.ErrUnsupportedVersion, "extension.ErrorReason", `"unsupported_version"`},
	{"CodeParseError", extension.CodeParseError, "", `-32700`},
	{"CodeInvalidRequest", extension.CodeInvalidRequest, "", `-32600`},
	{"CodeMethodNotFound", extension.CodeMethodNotFound, "", `-32601`},
	{"CodeInvalidParams", extension.CodeInvalidParams, "", `-32602`},
	{"CodeInternal", extension.CodeInternal, "", `-32603`},
	{"CodeServerBusy", extension.CodeServerBusy, "", `-32099`},
}

func TestUpstreamConstants(t *testing.T) {
	for _, c := range upstreamConstants {
		if c.typ != "" && fmt.Sprintf("%T", c.value) != c.typ {
			t.Errorf("%s has type %T, upstream %s", c.name, c.value, c.typ)
		}
		want := c.literal
		if unquoted, err := strconv.Unquote(want); err == nil {
			want = unquoted
		}
		if got := fmt.Sprint(c.value); got != want {
			t.Errorf("%s = %s, upstream %s", c.name, got, want)
		}
	}
	if len(upstreamConstants) != 131 {
		t.Fatalf("%d constants", len(upstreamConstants))
	}
}

func TestUpstreamSentinelErrors(t *testing.T) {
	for _, c := range []struct {
		err  error
		text string
	}{
		{extension.ErrNotReady, "extension: host connection is not initialized (wait for extension/initialized)"},
		{extension.ErrNoConnection, "extension: no host connection in context (use the context passed to an SDK callback)"},
		{extension.ErrUICancelled, "extension: the user dismissed the prompt"},
	} {
		if c.err.Error() != c.text {
			t.Errorf("%q, upstream %q", c.err.Error(), c.text)
		}
	}
}
