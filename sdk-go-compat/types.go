package extension

import "encoding/json"

// Wire DTOs of Extension Protocol v2. Generation A (the upstream SDK's
// schema, with the browser methods) is the base; the generation-B additions
// (tools, panel/view surfaces) are marked. Field names, order and JSON tags
// follow the upstream SDK so that sidecars written against it compile here.
//
// Tags read by the strict decoder (strict.go):
//   - a json tag without omitempty marks a required field (present, non-null);
//   - externalizable:"true" or nullable:"true" lets a required field be null;
//   - validate:"nonempty", "min=N", "max=N", "sha256" bound the value.

const ProtocolID = "reasonix.extension.v2"
const ProtocolMajor = 2
const ProtocolVersion = "2"

const (
	FrameBytes = 8388608

	ExternalizeFieldBytes = 65536

	ContentRefChunkBytes = 262144

	ContentRefObjectBytes = 8388608
)

const (
	MethodExtensionEvent                = "extension/event"
	MethodExtensionInitialize           = "extension/initialize"
	MethodExtensionInitialized          = "extension/initialized"
	MethodExtensionIntercept            = "extension/intercept"
	MethodExtensionProviderCatalog      = "extension/provider/catalog"
	MethodExtensionProviderStreamCancel = "extension/provider/stream/cancel"
	MethodExtensionProviderStreamChunk  = "extension/provider/stream/chunk"
	MethodExtensionProviderStreamEnd    = "extension/provider/stream/end"
	MethodExtensionProviderStreamOpen   = "extension/provider/stream/open"
	MethodExtensionResourcesChanged     = "extension/resources/changed"
	MethodExtensionShutdown             = "extension/shutdown"
	MethodExtensionUIAction             = "extension/ui/action"
	MethodExtensionUISubmit             = "extension/ui/submit"
	MethodHostBrowserTabAct             = "host/browser/tab/act"
	MethodHostBrowserTabList            = "host/browser/tab/list"
	MethodHostBrowserTabOpen            = "host/browser/tab/open"
	MethodHostBrowserTabSnapshot        = "host/browser/tab/snapshot"
	MethodHostBrowserTabWait            = "host/browser/tab/wait"
	MethodHostContentRead               = "host/content/read"
	MethodHostUIPublish                 = "host/ui/publish"
	MethodHostUIRequest                 = "host/ui/request"
)

// MethodExtensionToolCall is the generation-B tool method (not in the
// upstream SDK).
const MethodExtensionToolCall = "extension/tool/call"

const DomainErrorCode = -32000

type EventParams struct {
	Event        InterceptEvent      `json:"event"`
	Payload      json.RawMessage     `json:"payload" externalizable:"true"`
	Externalized []ExternalizedField `json:"externalized,omitempty"`
}

type InterceptEvent string

const (
	EventAgentBeforeStart   InterceptEvent = "agent.before_start"
	EventCompactionComplete InterceptEvent = "compaction.complete"
	EventCompactionPrepare  InterceptEvent = "compaction.prepare"
	EventContextPrepare     InterceptEvent = "context.prepare"
	EventFrontendEvent      InterceptEvent = "frontend.event"
	EventInputReceive       InterceptEvent = "input.receive"
	EventPermissionDecision InterceptEvent = "permission.decision"
	EventProviderRequest    InterceptEvent = "provider.request"
	EventProviderResponse   InterceptEvent = "provider.response"
	EventSessionEnd         InterceptEvent = "session.end"
	EventSessionLoad        InterceptEvent = "session.load"
	EventSessionRotate      InterceptEvent = "session.rotate"
	EventSessionSave        InterceptEvent = "session.save"
	EventSessionStart       InterceptEvent = "session.start"
	EventSystemPromptBuild  InterceptEvent = "system_prompt.build"
	EventToolAfter          InterceptEvent = "tool.after"
	EventToolBefore         InterceptEvent = "tool.before"
)

type ExternalizedField struct {
	JSONPointer string `json:"jsonPointer" validate:"nonempty"`
	ContentRef  string `json:"contentRef" validate:"nonempty"`
	TotalBytes  int64  `json:"totalBytes" validate:"min=0"`
	SHA256      string `json:"sha256" validate:"sha256"`
}

type InitializeParams struct {
	ProtocolVersion         string              `json:"protocolVersion" validate:"nonempty"`
	ProtocolID              string              `json:"protocolId" validate:"nonempty"`
	Manifest                ManifestExpectation `json:"manifest"`
	Session                 SessionContext      `json:"session"`
	Capabilities            HostCapabilities    `json:"capabilities"`
	DependencySchemaVersion int                 `json:"dependencySchemaVersion,omitempty" validate:"min=0"`
}

type ManifestExpectation struct {
	Intercepts   []string          `json:"intercepts,omitempty"`
	Replaces     []string          `json:"replaces,omitempty"`
	Providers    []string          `json:"providers,omitempty"`
	UIActions    []string          `json:"uiActions,omitempty"`
	Capabilities []string          `json:"capabilities,omitempty"`
	Requires     []RequirementWire `json:"requires,omitempty"`
	Provides     []CapabilityWire  `json:"provides,omitempty"`
	// Tools (generation B) names the manifest's runtime.tools.
	Tools []string `json:"tools,omitempty"`
}

type RequirementWire struct {
	Namespace    string `json:"namespace" validate:"nonempty"`
	Kind         string `json:"kind" validate:"nonempty"`
	ID           string `json:"id" validate:"nonempty"`
	Version      string `json:"version,omitempty"`
	SchemaHash   string `json:"schemaHash,omitempty"`
	VersionRange string `json:"versionRange,omitempty"`
	Optional     bool   `json:"optional,omitempty"`
}

type CapabilityWire struct {
	Namespace  string `json:"namespace" validate:"nonempty"`
	Kind       string `json:"kind" validate:"nonempty"`
	ID         string `json:"id" validate:"nonempty"`
	Version    string `json:"version,omitempty"`
	SchemaHash string `json:"schemaHash,omitempty"`
}

type SessionContext struct {
	SessionID     string `json:"sessionId" validate:"nonempty"`
	WorkspaceRoot string `json:"workspaceRoot" validate:"nonempty"`
	Generation    uint64 `json:"generation"`
	Epoch         string `json:"epoch,omitempty"`
}

type HostCapabilities struct {
	ContentRefs             bool       `json:"contentRefs"`
	UIHost                  UIHostKind `json:"uiHost"`
	ProtocolVersion         string     `json:"protocolVersion" validate:"nonempty"`
	DependencySchemaVersion int        `json:"dependencySchemaVersion,omitempty" validate:"min=0"`
}

type UIHostKind string

const (
	UIHostTUI      UIHostKind = "tui"
	UIHostDesktop  UIHostKind = "desktop"
	UIHostACP      UIHostKind = "acp"
	UIHostHeadless UIHostKind = "headless"
)

type InitializeResult struct {
	ProtocolVersion    string               `json:"protocolVersion" validate:"nonempty"`
	Name               string               `json:"name" validate:"nonempty"`
	Version            string               `json:"version" validate:"nonempty"`
	ComponentID        string               `json:"componentId,omitempty"`
	Subscriptions      []string             `json:"subscriptions,omitempty"`
	Replaces           []string             `json:"replaces,omitempty"`
	Providers          []ProviderDescriptor `json:"providers,omitempty"`
	UIActions          []UIActionDecl       `json:"uiActions,omitempty"`
	Requires           []RequirementWire    `json:"requires,omitempty"`
	Provides           []CapabilityWire     `json:"provides,omitempty"`
	StateSchemaVersion int                  `json:"stateSchemaVersion" validate:"min=0"`
	// Tools (generation B) names the tools this sidecar serves. Serve fills
	// it, sorted, from Options.Tools when the handler leaves it nil.
	Tools []string `json:"tools,omitempty"`
}

type ProviderDescriptor struct {
	Ref                            string   `json:"ref" validate:"nonempty"`
	DisplayName                    string   `json:"displayName,omitempty"`
	Model                          string   `json:"model,omitempty"`
	ContextWindow                  int      `json:"contextWindow,omitempty" validate:"min=0"`
	PricingCurrency                string   `json:"pricingCurrency,omitempty"`
	CacheHitPerMillion             float64  `json:"cacheHitPerMillion,omitempty" validate:"min=0"`
	InputPerMillion                float64  `json:"inputPerMillion,omitempty" validate:"min=0"`
	OutputPerMillion               float64  `json:"outputPerMillion,omitempty" validate:"min=0"`
	Vision                         bool     `json:"vision,omitempty"`
	Tools                          bool     `json:"tools,omitempty"`
	Reasoning                      bool     `json:"reasoning,omitempty"`
	Efforts                        []string `json:"efforts,omitempty"`
	DefaultEffort                  string   `json:"defaultEffort,omitempty"`
	ToolCallReasoning              bool     `json:"toolCallReasoning,omitempty"`
	ReasoningRoundTrip             bool     `json:"reasoningRoundTrip,omitempty"`
	WarnOnMissingToolCallReasoning bool     `json:"warnOnMissingToolCallReasoning,omitempty"`
}

type UIActionDecl struct {
	ActionID string `json:"actionId" validate:"nonempty"`
	Label    string `json:"label,omitempty"`
}

type InitializedParams struct{}

type InterceptParams struct {
	Event         InterceptEvent      `json:"event"`
	Seq           uint64              `json:"seq" validate:"min=1"`
	Payload       json.RawMessage     `json:"payload" externalizable:"true"`
	TimeoutMillis int                 `json:"timeoutMillis" validate:"min=0"`
	Externalized  []ExternalizedField `json:"externalized,omitempty"`
}

type InterceptResult struct {
	Decision     InterceptDecision   `json:"decision"`
	Reason       string              `json:"reason,omitempty"`
	Replacement  json.RawMessage     `json:"replacement,omitempty" externalizable:"true"`
	Externalized []ExternalizedField `json:"externalized,omitempty"`
}

type InterceptDecision string

const (
	DecisionContinue InterceptDecision = "continue"
	DecisionBlock    InterceptDecision = "block"
	DecisionReplace  InterceptDecision = "replace"
	DecisionAllow    InterceptDecision = "allow"
	DecisionDeny     InterceptDecision = "deny"
)

type ProviderCatalogParams struct{}

type ProviderCatalogResult struct {
	Providers []ProviderDescriptor `json:"providers"`
}

type StreamCancelParams struct {
	StreamID string `json:"streamId" validate:"nonempty"`
}

type StreamCancelResult struct {
	Cancelled bool `json:"cancelled"`
}

type StreamChunkParams struct {
	StreamID   string        `json:"streamId" validate:"nonempty"`
	Seq        int64         `json:"seq" validate:"min=1"`
	Chunk      ProviderChunk `json:"chunk"`
	Generation uint64        `json:"generation,omitempty"`
	Epoch      string        `json:"epoch,omitempty"`
}

type ProviderChunk struct {
	Type       ProviderChunkType `json:"type"`
	Text       string            `json:"text,omitempty"`
	Signature  string            `json:"signature,omitempty"`
	ToolCall   *ProviderToolCall `json:"toolCall,omitempty"`
	ArgChars   int               `json:"argChars,omitempty" validate:"min=0"`
	Usage      *ProviderUsage    `json:"usage,omitempty"`
	Error      *ProviderError    `json:"error,omitempty"`
	Generation uint64            `json:"generation,omitempty"`
	Epoch      string            `json:"epoch,omitempty"`
}

type ProviderChunkType string

const (
	ChunkText          ProviderChunkType = "text"
	ChunkReasoning     ProviderChunkType = "reasoning"
	ChunkToolCallStart ProviderChunkType = "tool_call_start"
	ChunkToolCallDelta ProviderChunkType = "tool_call_args_delta"
	ChunkToolCall      ProviderChunkType = "tool_call"
	ChunkUsage         ProviderChunkType = "usage"
	ChunkDone          ProviderChunkType = "done"
	ChunkError         ProviderChunkType = "error"
)

type ProviderToolCall struct {
	ID               string `json:"id" validate:"nonempty"`
	Name             string `json:"name" validate:"nonempty"`
	Arguments        string `json:"arguments"`
	ThoughtSignature string `json:"thought_signature,omitempty"`
}

type ProviderUsage struct {
	PromptTokens     int    `json:"promptTokens" validate:"min=0"`
	CompletionTokens int    `json:"completionTokens" validate:"min=0"`
	TotalTokens      int    `json:"totalTokens" validate:"min=0"`
	CacheHitTokens   int    `json:"cacheHitTokens" validate:"min=0"`
	CacheMissTokens  int    `json:"cacheMissTokens" validate:"min=0"`
	ReasoningTokens  int    `json:"reasoningTokens" validate:"min=0"`
	FinishReason     string `json:"finishReason,omitempty"`
}

type ProviderError struct {
	Code    ProviderErrorCode `json:"code"`
	Message string            `json:"message" validate:"nonempty"`
}

type ProviderErrorCode string

const (
	ProviderFailed      ProviderErrorCode = "provider_failed"
	ProviderInterrupted ProviderErrorCode = "provider_interrupted"
)

type StreamEndParams struct {
	StreamID    string `json:"streamId" validate:"nonempty"`
	LastSeq     int64  `json:"lastSeq" validate:"min=0"`
	Error       string `json:"error,omitempty"`
	Interrupted bool   `json:"interrupted,omitempty"`
}

type StreamOpenParams struct {
	StreamID    string          `json:"streamId" validate:"nonempty"`
	ProviderRef string          `json:"providerRef" validate:"nonempty"`
	Model       string          `json:"model,omitempty"`
	Effort      string          `json:"effort,omitempty"`
	Request     ProviderRequest `json:"request"`
	SeqBase     int             `json:"seqBase" validate:"min=0"`
	Generation  uint64          `json:"generation,omitempty"`
	Epoch       string          `json:"epoch,omitempty"`
}

type ProviderRequest struct {
	Messages       []ProviderMessage       `json:"messages"`
	Tools          []ProviderToolSchema    `json:"tools"`
	Temperature    *float64                `json:"temperature,omitempty"`
	MaxTokens      int                     `json:"maxTokens" validate:"min=0"`
	ResponseFormat *ProviderResponseFormat `json:"responseFormat,omitempty"`
}

type ProviderMessage struct {
	Role               ProviderRole       `json:"role,omitempty"`
	Content            string             `json:"content,omitempty" externalizable:"true"`
	Images             []string           `json:"images,omitempty"`
	ReasoningContent   string             `json:"reasoning_content,omitempty"`
	ReasoningSignature string             `json:"reasoning_signature,omitempty"`
	ToolCalls          []ProviderToolCall `json:"tool_calls,omitempty"`
	ToolCallID         string             `json:"tool_call_id,omitempty"`
	Name               string             `json:"name,omitempty"`
}

type ProviderRole string

const (
	ProviderRoleSystem    ProviderRole = "system"
	ProviderRoleUser      ProviderRole = "user"
	ProviderRoleAssistant ProviderRole = "assistant"
	ProviderRoleTool      ProviderRole = "tool"
)

type ProviderToolSchema struct {
	Name        string          `json:"name" validate:"nonempty"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type ProviderResponseFormat struct {
	Type string `json:"type" validate:"nonempty"`
}

type StreamOpenResult struct {
	Accepted bool `json:"accepted"`
}

type ResourcesChangedParams struct {
	Paths []string `json:"paths"`
}

type ShutdownParams struct {
	TimeoutMillis int `json:"timeoutMillis" validate:"min=0"`
}

type ShutdownResult struct {
	Accepted bool `json:"accepted"`
}

type UIActionParams struct {
	ActionID   string            `json:"actionId" validate:"nonempty"`
	SessionID  string            `json:"sessionId" validate:"nonempty"`
	Generation uint64            `json:"generation"`
	Args       map[string]string `json:"args,omitempty"`
}

type UIActionResult struct {
	Accepted bool   `json:"accepted"`
	Message  string `json:"message,omitempty"`
}

type UISubmitParams struct {
	SurfaceID  string         `json:"surfaceId" validate:"nonempty"`
	SessionID  string         `json:"sessionId" validate:"nonempty"`
	Generation uint64         `json:"generation"`
	Values     map[string]any `json:"values"`
}

type UISubmitResult struct {
	Accepted bool `json:"accepted"`
}

type BrowserTabActParams struct {
	TabID          string           `json:"tabId" validate:"nonempty"`
	ExpectedOrigin string           `json:"expectedOrigin" validate:"nonempty"`
	Action         BrowserActAction `json:"action"`
	Ref            string           `json:"ref,omitempty"`
	Text           string           `json:"text,omitempty"`
	Key            string           `json:"key,omitempty"`
	Value          string           `json:"value,omitempty"`
	Delta          *int             `json:"delta,omitempty"`
}

type BrowserActAction string

const (
	BrowserActClick  BrowserActAction = "click"
	BrowserActHover  BrowserActAction = "hover"
	BrowserActScroll BrowserActAction = "scroll"
	BrowserActType   BrowserActAction = "type"
	BrowserActPress  BrowserActAction = "press"
	BrowserActSelect BrowserActAction = "select"
)

type BrowserTabActResult struct {
	Tab BrowserTab `json:"tab"`
}

type BrowserTab struct {
	TabID      string `json:"tabId" validate:"nonempty"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	Active     bool   `json:"active"`
	Generation uint64 `json:"generation"`
}

type BrowserTabListParams struct{}

type BrowserTabListResult struct {
	Tabs []BrowserTab `json:"tabs"`
}

type BrowserTabOpenParams struct {
	URL         string                `json:"url" validate:"nonempty"`
	Disposition BrowserTabDisposition `json:"disposition"`
}

type BrowserTabDisposition string

const (
	BrowserDispositionForeground BrowserTabDisposition = "foreground"
	BrowserDispositionBackground BrowserTabDisposition = "background"
)

type BrowserTabOpenResult struct {
	Tab BrowserTab `json:"tab"`
}

type BrowserTabSnapshotParams struct {
	TabID    string `json:"tabId" validate:"nonempty"`
	MaxChars *int   `json:"maxChars,omitempty" validate:"min=1"`
}

type BrowserTabSnapshotResult struct {
	Tab      BrowserTab `json:"tab"`
	Origin   string     `json:"origin"`
	Snapshot string     `json:"snapshot"`
}

type BrowserTabWaitParams struct {
	TabID         string           `json:"tabId" validate:"nonempty"`
	WaitUntil     BrowserWaitUntil `json:"waitUntil"`
	TimeoutMillis *int             `json:"timeoutMillis,omitempty" validate:"min=1,max=30000"`
}

type BrowserWaitUntil string

const (
	BrowserWaitLoad             BrowserWaitUntil = "load"
	BrowserWaitNetworkIdle      BrowserWaitUntil = "network_idle"
	BrowserWaitDomContentLoaded BrowserWaitUntil = "dom_content_loaded"
	BrowserWaitNavigation       BrowserWaitUntil = "navigation"
)

type BrowserTabWaitResult struct {
	Tab BrowserTab `json:"tab"`
}

type ContentReadParams struct {
	ContentRef string `json:"contentRef" validate:"nonempty"`
	Offset     int64  `json:"offset" validate:"min=0"`
}

type ContentReadResult struct {
	ContentRef string          `json:"contentRef" validate:"nonempty"`
	Offset     int64           `json:"offset" validate:"min=0"`
	DataBase64 string          `json:"dataBase64"`
	NextOffset *int64          `json:"nextOffset,omitempty" validate:"min=0"`
	TotalBytes int64           `json:"totalBytes" validate:"min=0"`
	SHA256     string          `json:"sha256" validate:"sha256"`
	Encoding   ContentEncoding `json:"encoding"`
}

type ContentEncoding string

const (
	ContentUTF8 ContentEncoding = "utf8"
)

type UIPublishParams struct {
	SurfaceID  string          `json:"surfaceId" validate:"nonempty"`
	SessionID  string          `json:"sessionId" validate:"nonempty"`
	Generation uint64          `json:"generation"`
	Kind       UISurfaceKind   `json:"kind"`
	Payload    json.RawMessage `json:"payload"`
}

type UISurfaceKind string

const (
	UISurfaceStatus       UISurfaceKind = "status"
	UISurfaceCard         UISurfaceKind = "card"
	UISurfaceForm         UISurfaceKind = "form"
	UISurfaceNotification UISurfaceKind = "notification"
	// UISurfacePanel and UISurfaceView are generation-B surface kinds.
	UISurfacePanel UISurfaceKind = "panel"
	UISurfaceView  UISurfaceKind = "view"
)

type UIPublishResult struct {
	Accepted bool `json:"accepted"`
}

type UIRequestParams struct {
	SurfaceID  string          `json:"surfaceId" validate:"nonempty"`
	SessionID  string          `json:"sessionId" validate:"nonempty"`
	Generation uint64          `json:"generation"`
	Kind       UIRequestKind   `json:"kind"`
	Payload    json.RawMessage `json:"payload"`
}

type UIRequestKind string

const (
	UIRequestConfirm     UIRequestKind = "confirm"
	UIRequestInput       UIRequestKind = "input"
	UIRequestSelect      UIRequestKind = "select"
	UIRequestMultiselect UIRequestKind = "multiselect"
)

type UIRequestResult struct {
	Cancelled bool           `json:"cancelled"`
	Values    map[string]any `json:"values,omitempty"`
}

type UIStatusPayload struct {
	Label    string     `json:"label" validate:"nonempty"`
	Detail   string     `json:"detail,omitempty"`
	Severity UISeverity `json:"severity,omitempty"`
	Progress *float64   `json:"progress,omitempty"`
}

type UISeverity string

const (
	UISeverityInfo  UISeverity = "info"
	UISeverityWarn  UISeverity = "warn"
	UISeverityError UISeverity = "error"
)

type UICardPayload struct {
	Title    string        `json:"title,omitempty"`
	Markdown string        `json:"markdown,omitempty"`
	Text     string        `json:"text,omitempty"`
	Fields   []UIKeyValue  `json:"fields,omitempty"`
	Progress *float64      `json:"progress,omitempty"`
	Actions  []UIActionRef `json:"actions,omitempty"`
}

type UIKeyValue struct {
	Key   string `json:"key" validate:"nonempty"`
	Value string `json:"value"`
}

type UIActionRef struct {
	ActionID string `json:"actionId" validate:"nonempty"`
	Label    string `json:"label" validate:"nonempty"`
}

type UIFormPayload struct {
	Title   string        `json:"title,omitempty"`
	Message string        `json:"message,omitempty"`
	Fields  []UIFormField `json:"fields"`
}

type UIFormField struct {
	Key      string      `json:"key" validate:"nonempty"`
	Label    string      `json:"label,omitempty"`
	Kind     UIFieldKind `json:"kind"`
	Options  []string    `json:"options,omitempty"`
	Default  any         `json:"default,omitempty"`
	Required bool        `json:"required,omitempty"`
}

type UIFieldKind string

const (
	UIFieldConfirm     UIFieldKind = "confirm"
	UIFieldInput       UIFieldKind = "input"
	UIFieldSelect      UIFieldKind = "select"
	UIFieldMultiselect UIFieldKind = "multiselect"
)

type UINotificationPayload struct {
	Title    string     `json:"title" validate:"nonempty"`
	Body     string     `json:"body,omitempty"`
	Severity UISeverity `json:"severity,omitempty"`
}

// ToolCallParams is the generation-B extension/tool/call request. Arguments
// must be present but may be JSON null.
type ToolCallParams struct {
	Name          string          `json:"name" validate:"nonempty"`
	Arguments     json.RawMessage `json:"arguments" nullable:"true"`
	TimeoutMillis int             `json:"timeoutMillis" validate:"min=0"`
}

// ToolCallResult is the generation-B extension/tool/call answer: Content is
// what the model reads; IsError marks a failure the tool reports itself.
type ToolCallResult struct {
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

type ProtocolErrorData struct {
	Reason    ErrorReason `json:"reason"`
	Retryable bool        `json:"retryable"`
}

type ErrorReason string

const (
	ErrActivationFailed        ErrorReason = "activation_failed"
	ErrBrowserCancelled        ErrorReason = "browser_cancelled"
	ErrBrowserOriginMismatch   ErrorReason = "browser_origin_mismatch"
	ErrBrowserPermissionDenied ErrorReason = "browser_permission_denied"
	ErrBrowserStaleRef         ErrorReason = "browser_stale_ref"
	ErrBrowserTabBusy          ErrorReason = "browser_tab_busy"
	ErrBrowserTabNotFound      ErrorReason = "browser_tab_not_found"
	ErrBrowserTimeout          ErrorReason = "browser_timeout"
	ErrBrowserUnavailable      ErrorReason = "browser_unavailable"
	ErrCapabilityNotDeclared   ErrorReason = "capability_not_declared"
	ErrCleanupFailed           ErrorReason = "cleanup_failed"
	ErrContentRefExpired       ErrorReason = "content_ref_expired"
	ErrDependencyCycle         ErrorReason = "dependency_cycle"
	ErrDependencyUnsatisfied   ErrorReason = "dependency_unsatisfied"
	ErrFrameTooLarge           ErrorReason = "frame_too_large"
	ErrInterceptTimeout        ErrorReason = "intercept_timeout"
	ErrInternal                ErrorReason = "internal"
	ErrInvalidParams           ErrorReason = "invalid_params"
	ErrProtocolError           ErrorReason = "protocol_error"
	ErrProviderFailed          ErrorReason = "provider_failed"
	ErrProviderInterrupted     ErrorReason = "provider_interrupted"
	ErrSchemaMismatch          ErrorReason = "schema_mismatch"
	ErrShutdownTimeout         ErrorReason = "shutdown_timeout"
	ErrStaleGeneration         ErrorReason = "stale_generation"
	ErrStreamCancelled         ErrorReason = "stream_cancelled"
	ErrStreamGap               ErrorReason = "stream_gap"
	ErrUnknownMethod           ErrorReason = "unknown_method"
	ErrUnsupportedVersion      ErrorReason = "unsupported_version"
)

const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603

	CodeServerBusy = -32099
)
