package extension

import (
	"context"
	"encoding/json"
	"strings"
)

// HostBrowser is the client for the generation-A restricted browser
// (host/browser/tab/*). A host without a browser answers these calls with
// browser_unavailable or unknown_method, which come back as *ProtocolError.
type HostBrowser struct{}

func (HostBrowser) List(ctx context.Context) (BrowserTabListResult, error) {
	var result BrowserTabListResult
	if err := browserCall(ctx, MethodHostBrowserTabList, BrowserTabListParams{}, &result); err != nil {
		return BrowserTabListResult{}, err
	}
	if result.Tabs == nil {
		result.Tabs = []BrowserTab{}
	}
	return result, nil
}

func (HostBrowser) Open(ctx context.Context, url string, disposition BrowserTabDisposition) (BrowserTab, error) {
	lower := strings.ToLower(strings.TrimSpace(url))
	if lower == "" {
		return BrowserTab{}, invalidBrowserParams("url is required")
	}
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return BrowserTab{}, invalidBrowserParams("url must be an absolute http(s) URL")
	}
	if disposition != BrowserDispositionForeground && disposition != BrowserDispositionBackground {
		return BrowserTab{}, invalidBrowserParams("disposition must be foreground or background")
	}
	var result BrowserTabOpenResult
	if err := browserCall(ctx, MethodHostBrowserTabOpen, BrowserTabOpenParams{URL: url, Disposition: disposition}, &result); err != nil {
		return BrowserTab{}, err
	}
	return result.Tab, nil
}

func (HostBrowser) Snapshot(ctx context.Context, tabID string, maxChars *int) (BrowserTabSnapshotResult, error) {
	if strings.TrimSpace(tabID) == "" {
		return BrowserTabSnapshotResult{}, invalidBrowserParams("tabId is required")
	}
	if maxChars != nil && *maxChars < 1 {
		return BrowserTabSnapshotResult{}, invalidBrowserParams("maxChars must be >= 1")
	}
	var result BrowserTabSnapshotResult
	if err := browserCall(ctx, MethodHostBrowserTabSnapshot, BrowserTabSnapshotParams{TabID: tabID, MaxChars: maxChars}, &result); err != nil {
		return BrowserTabSnapshotResult{}, err
	}
	return result, nil
}

func (HostBrowser) Wait(ctx context.Context, tabID string, waitUntil BrowserWaitUntil, timeoutMillis *int) (BrowserTab, error) {
	if strings.TrimSpace(tabID) == "" {
		return BrowserTab{}, invalidBrowserParams("tabId is required")
	}
	if !enumContains(typeOf(waitUntil), string(waitUntil)) {
		return BrowserTab{}, invalidBrowserParams("waitUntil is not a known condition")
	}
	if timeoutMillis != nil && (*timeoutMillis < 1 || *timeoutMillis > 30000) {
		return BrowserTab{}, invalidBrowserParams("timeoutMillis must be 1-30000")
	}
	var result BrowserTabWaitResult
	params := BrowserTabWaitParams{TabID: tabID, WaitUntil: waitUntil, TimeoutMillis: timeoutMillis}
	if err := browserCall(ctx, MethodHostBrowserTabWait, params, &result); err != nil {
		return BrowserTab{}, err
	}
	return result.Tab, nil
}

func (HostBrowser) Act(ctx context.Context, params BrowserTabActParams) (BrowserTab, error) {
	if strings.TrimSpace(params.TabID) == "" {
		return BrowserTab{}, invalidBrowserParams("tabId is required")
	}
	if strings.TrimSpace(params.ExpectedOrigin) == "" {
		return BrowserTab{}, invalidBrowserParams("expectedOrigin is required")
	}
	switch params.Action {
	case BrowserActClick, BrowserActHover, BrowserActType, BrowserActSelect:
		if strings.TrimSpace(params.Ref) == "" {
			return BrowserTab{}, invalidBrowserParams("ref is required for " + string(params.Action))
		}
	case BrowserActScroll:
		if params.Delta == nil || *params.Delta == 0 {
			return BrowserTab{}, invalidBrowserParams("delta must be non-zero for scroll")
		}
	case BrowserActPress:
		if strings.TrimSpace(params.Key) == "" {
			return BrowserTab{}, invalidBrowserParams("key is required for press")
		}
	default:
		return BrowserTab{}, invalidBrowserParams("action is not a known browser action")
	}
	var result BrowserTabActResult
	if err := browserCall(ctx, MethodHostBrowserTabAct, params, &result); err != nil {
		return BrowserTab{}, err
	}
	return result.Tab, nil
}

func invalidBrowserParams(message string) error {
	return &ProtocolError{Reason: ErrInvalidParams, Message: message}
}

func browserCall(ctx context.Context, method string, params any, result any) error {
	s := serverFrom(ctx)
	if s == nil {
		return ErrNoConnection
	}
	answer, err := s.callHost(ctx, method, params)
	if err != nil {
		return err
	}
	if err := strictDecode(json.RawMessage(answer), result); err != nil {
		return &ProtocolError{Reason: ErrProtocolError, Message: "invalid " + method + " result"}
	}
	return nil
}
