package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// withCallback runs fn inside an interceptor (so it has an SDK context) and
// lets the test play the host for the calls it makes.
func withCallback(t *testing.T, fn func(ctx context.Context) (string, error)) (*scriptedHost, string, chan string) {
	out := make(chan string, 1)
	h := startHost(t, testHandler{}, Options{Interceptors: map[string]InterceptorFunc{
		"*": func(ctx context.Context, _ string, _ json.RawMessage) (*InterceptResult, error) {
			s, err := fn(ctx)
			if err != nil {
				out <- "error: " + err.Error()
				var pe *ProtocolError
				if errors.As(err, &pe) {
					out <- "reason: " + string(pe.Reason)
				}
			} else {
				out <- s
			}
			return Continue(), nil
		},
	}})
	h.handshake()
	id := h.request(MethodExtensionIntercept, intercept("session.start", 1))
	return h, id, out
}

type uiRequestSeen struct {
	Kind    UIRequestKind
	Payload UIFormPayload
}

func (h *scriptedHost) expectUIRequest(answer any) (uiRequestSeen, wireMsg) {
	h.t.Helper()
	m := h.next()
	if m.method() != MethodHostUIRequest {
		h.t.Fatalf("expected host/ui/request, got %s", m.raw)
	}
	var p UIRequestParams
	if err := m.decode("params", &p); err != nil {
		h.t.Fatal(err)
	}
	raw, _ := json.Marshal(p)
	var strict UIRequestParams
	if err := strictDecode(raw, &strict); err != nil {
		h.t.Fatalf("the SDK sent an invalid host/ui/request: %v", err)
	}
	var form UIFormPayload
	if err := strictDecode(p.Payload, &form); err != nil {
		h.t.Fatalf("prompt payload: %v", err)
	}
	h.respond(m.fields["id"], answer)
	return uiRequestSeen{Kind: p.Kind, Payload: form}, m
}

func TestRequestConfirmUsesTheValueKey(t *testing.T) {
	h, id, out := withCallback(t, func(ctx context.Context) (string, error) {
		ok, err := HostUI{}.RequestConfirm(ctx, "s1", 3, "confirm-1", "Proceed?")
		return fmt.Sprint(ok), err
	})
	seen, m := h.expectUIRequest(map[string]any{"cancelled": false, "values": map[string]any{"value": true}})
	var p map[string]any
	_ = m.decode("params", &p)
	if seen.Kind != UIRequestConfirm || len(seen.Payload.Fields) != 1 || seen.Payload.Fields[0].Key != "value" ||
		seen.Payload.Fields[0].Kind != UIFieldConfirm || p["sessionId"] != "s1" || p["generation"] != float64(3) || p["surfaceId"] != "confirm-1" {
		t.Fatalf("request %s", m.raw)
	}
	if got := <-out; got != "true" {
		t.Fatalf("answer %q", got)
	}
	h.answerTo(id)
}

func TestDismissedPromptIsErrUICancelled(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		_, err := HostUI{}.RequestInput(ctx, "s1", 1, "in", InputPrompt{Label: "Name", Default: "bob"})
		if errors.Is(err, ErrUICancelled) {
			return "cancelled", nil
		}
		return "", err
	})
	seen, _ := h.expectUIRequest(map[string]any{"cancelled": true})
	if seen.Kind != UIRequestInput || seen.Payload.Fields[0].Default != "bob" {
		t.Fatalf("%+v", seen)
	}
	if got := <-out; got != "cancelled" {
		t.Fatal(got)
	}
}

func TestSelectAndMultiSelectAnswers(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		one, err := HostUI{}.RequestSelect(ctx, "s1", 1, "sel", SelectPrompt{Options: []string{"a", "b"}})
		if err != nil {
			return "", err
		}
		many, err := HostUI{}.RequestMultiSelect(ctx, "s1", 1, "ms", MultiSelectPrompt{Options: []string{"a", "b", "c"}})
		if err != nil {
			return "", err
		}
		none, err := HostUI{}.RequestMultiSelect(ctx, "s1", 1, "ms", MultiSelectPrompt{Options: []string{"a"}})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%v %v %v %v", one, many, len(none), none != nil), nil
	})
	seen, _ := h.expectUIRequest(map[string]any{"cancelled": false, "values": map[string]any{"value": "b"}})
	if seen.Kind != UIRequestSelect || !reflect.DeepEqual(seen.Payload.Fields[0].Options, []string{"a", "b"}) {
		t.Fatalf("%+v", seen)
	}
	seen, _ = h.expectUIRequest(map[string]any{"cancelled": false, "values": map[string]any{"value": []string{"a", "c"}}})
	if seen.Kind != UIRequestMultiselect {
		t.Fatalf("%+v", seen)
	}
	h.expectUIRequest(map[string]any{"cancelled": false, "values": map[string]any{}})
	if got := <-out; got != "b [a c] 0 true" {
		t.Fatalf("%q", got)
	}
}

func TestMalformedPromptAnswers(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		_, err := HostUI{}.RequestMultiSelect(ctx, "s1", 1, "ms", MultiSelectPrompt{Options: []string{"a"}})
		return "", err
	})
	h.expectUIRequest(map[string]any{"cancelled": false, "values": map[string]any{"value": []any{1}}})
	<-out
	if got := <-out; got != "reason: protocol_error" {
		t.Fatal(got)
	}
	h2, _, out2 := withCallback(t, func(ctx context.Context) (string, error) {
		_, err := HostUI{}.RequestConfirm(ctx, "s1", 1, "c", "ok?")
		return "", err
	})
	h2.expectUIRequest(map[string]any{"cancelled": false, "extra": 1})
	<-out2
	if got := <-out2; got != "reason: protocol_error" {
		t.Fatal(got)
	}
}

func TestRequestFormReturnsAllValues(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		values, err := HostUI{}.RequestForm(ctx, "s1", 1, "form", UIFormPayload{Title: "T", Fields: []UIFormField{
			{Key: "name", Kind: UIFieldInput}, {Key: "ok", Kind: UIFieldConfirm},
		}})
		return fmt.Sprintf("%v %v", values["name"], values["ok"]), err
	})
	seen, _ := h.expectUIRequest(map[string]any{"cancelled": false, "values": map[string]any{"name": "n", "ok": false}})
	if seen.Kind != UIRequestInput || seen.Payload.Title != "T" || len(seen.Payload.Fields) != 2 {
		t.Fatalf("%+v", seen)
	}
	if got := <-out; got != "n false" {
		t.Fatal(got)
	}
}

func TestPublishHelpers(t *testing.T) {
	progress := 0.5
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		ui := HostUI{}
		steps := []error{
			ui.PublishStatus(ctx, "s1", 2, "st", UIStatusPayload{Label: "busy", Severity: UISeverityWarn, Progress: &progress}),
			ui.PublishCard(ctx, "s1", 2, "card", UICardPayload{Title: "t", Fields: []UIKeyValue{{Key: "k", Value: "v"}}, Actions: []UIActionRef{{ActionID: "go", Label: "Go"}}}),
			ui.PublishForm(ctx, "s1", 2, "form", UIFormPayload{Fields: []UIFormField{{Key: "a", Kind: UIFieldInput}}}),
			ui.PublishNotification(ctx, "s1", 2, "note", UINotificationPayload{Title: "hello"}),
			ui.PublishSurface(ctx, "s1", 2, "panel", UISurfacePanel, map[string]any{"title": "p"}),
			ui.PublishStatus(ctx, "s1", 2, "st", UIStatusPayload{Label: "rejected"}),
		}
		return fmt.Sprint(steps), nil
	})
	wantKinds := []UISurfaceKind{UISurfaceStatus, UISurfaceCard, UISurfaceForm, UISurfaceNotification, UISurfacePanel, UISurfaceStatus}
	for i, kind := range wantKinds {
		m := h.next()
		var p UIPublishParams
		raw, _ := json.Marshal(m.fields["params"])
		if m.method() != MethodHostUIPublish || strictDecode(m.fields["params"], &p) != nil || p.Kind != kind || p.Generation != 2 {
			t.Fatalf("publish %d: %s", i, raw)
		}
		h.respond(m.fields["id"], map[string]any{"accepted": i < len(wantKinds)-1})
	}
	got := <-out
	if got != "[<nil> <nil> <nil> <nil> <nil> extension: the host did not accept the status surface \"st\"]" {
		t.Fatalf("%s", got)
	}
}

func TestPublishChecksPayloadsLocally(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		ui := HostUI{}
		errs := []error{
			ui.PublishStatus(ctx, "s1", 1, "st", UIStatusPayload{}),
			ui.PublishStatus(ctx, "s1", 1, "st", UIStatusPayload{Label: "x", Severity: "loud"}),
			ui.PublishCard(ctx, "s1", 1, "c", UICardPayload{Fields: []UIKeyValue{{}}}),
			ui.PublishForm(ctx, "s1", 1, "f", UIFormPayload{}),
			ui.PublishForm(ctx, "s1", 1, "f", UIFormPayload{Fields: []UIFormField{{Key: "a", Kind: "slider"}}}),
			ui.PublishNotification(ctx, "s1", 1, "n", UINotificationPayload{}),
			ui.PublishStatus(ctx, "", 1, "st", UIStatusPayload{Label: "x"}),
			ui.PublishSurface(ctx, "s1", 1, "x", "hologram", nil),
		}
		_, selectErr := ui.RequestSelect(ctx, "s1", 1, "s", SelectPrompt{})
		errs = append(errs, selectErr)
		for i, err := range errs {
			if err == nil {
				return "", fmt.Errorf("check %d passed", i)
			}
		}
		return "all refused", nil
	})
	if got := <-out; got != "all refused" {
		t.Fatal(got)
	}
	// Nothing reached the host: the next frame is the intercept answer.
	if m := h.next(); m.has("method") {
		t.Fatalf("unexpected host call %s", m.raw)
	}
}

func TestUIActionAndSubmit(t *testing.T) {
	h := startHost(t, testHandler{}, Options{UI: UIHandler{
		Action: func(_ context.Context, id string, args map[string]string) error {
			if id == "fail" {
				return errors.New("cannot do that now")
			}
			if args["k"] != "v" {
				return errors.New("missing arg")
			}
			return nil
		},
		Submit: func(_ context.Context, surface string, values map[string]any) error {
			if surface == "bad" {
				return errors.New("nope")
			}
			return nil
		},
	}})
	h.handshake()
	var a UIActionResult
	h.result(h.call(MethodExtensionUIAction, map[string]any{"actionId": "go", "sessionId": "s", "generation": 1, "args": map[string]string{"k": "v"}}), &a)
	if !a.Accepted {
		t.Fatalf("%+v", a)
	}
	h.result(h.call(MethodExtensionUIAction, map[string]any{"actionId": "fail", "sessionId": "s", "generation": 1}), &a)
	if a.Accepted || a.Message != "cannot do that now" {
		t.Fatalf("%+v", a)
	}
	var sres UISubmitResult
	h.result(h.call(MethodExtensionUISubmit, map[string]any{"surfaceId": "f", "sessionId": "s", "generation": 1, "values": map[string]any{"a": 1}}), &sres)
	if !sres.Accepted {
		t.Fatal("submit refused")
	}
	h.result(h.call(MethodExtensionUISubmit, map[string]any{"surfaceId": "bad", "sessionId": "s", "generation": 1, "values": map[string]any{}}), &sres)
	if sres.Accepted {
		t.Fatal("failing submit accepted")
	}
	h.expectReason(h.call(MethodExtensionUISubmit, map[string]any{"surfaceId": "f", "sessionId": "s", "generation": 1}), CodeInvalidParams, ErrInvalidParams)

	h2 := startHost(t, testHandler{}, Options{})
	h2.handshake()
	h2.expectReason(h2.call(MethodExtensionUIAction, map[string]any{"actionId": "go", "sessionId": "s", "generation": 1}), CodeMethodNotFound, ErrUnknownMethod)
	h2.expectReason(h2.call(MethodExtensionUISubmit, map[string]any{"surfaceId": "f", "sessionId": "s", "generation": 1, "values": map[string]any{}}), CodeMethodNotFound, ErrUnknownMethod)
}

func TestHostBrowserSurfacesTheHostError(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		var b HostBrowser
		_, errList := b.List(ctx)
		_, errOpen := b.Open(ctx, "https://example.com/", BrowserDispositionForeground)
		tab, errWait := b.Wait(ctx, "tab-1", BrowserWaitLoad, nil)
		var pl, po *ProtocolError
		if !errors.As(errList, &pl) || !errors.As(errOpen, &po) || errWait != nil {
			return "", fmt.Errorf("list %v open %v wait %v", errList, errOpen, errWait)
		}
		return string(pl.Reason) + " " + string(po.Reason) + " " + tab.TabID, nil
	})
	m := h.next()
	if m.method() != MethodHostBrowserTabList {
		t.Fatalf("%s", m.raw)
	}
	h.respondError(m.fields["id"], ErrUnknownMethod)
	m = h.next()
	var open BrowserTabOpenParams
	if m.method() != MethodHostBrowserTabOpen || strictDecode(m.fields["params"], &open) != nil || open.URL != "https://example.com/" {
		t.Fatalf("%s", m.raw)
	}
	h.respondError(m.fields["id"], ErrBrowserUnavailable)
	m = h.next()
	if m.method() != MethodHostBrowserTabWait {
		t.Fatalf("%s", m.raw)
	}
	h.respond(m.fields["id"], map[string]any{"tab": map[string]any{"tabId": "tab-1", "url": "u", "title": "t", "active": true, "generation": 1}})
	if got := <-out; got != "unknown_method browser_unavailable tab-1" {
		t.Fatal(got)
	}
}

func TestHostBrowserChecksParamsLocally(t *testing.T) {
	zero, big := 0, 30001
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		var b HostBrowser
		_, e1 := b.Open(ctx, "file:///etc/passwd", BrowserDispositionForeground)
		_, e2 := b.Open(ctx, "https://x", "sideways")
		_, e3 := b.Snapshot(ctx, "t", &zero)
		_, e4 := b.Wait(ctx, "t", BrowserWaitLoad, &big)
		_, e5 := b.Act(ctx, BrowserTabActParams{TabID: "t", ExpectedOrigin: "o", Action: BrowserActClick})
		_, e6 := b.Act(ctx, BrowserTabActParams{TabID: "t", ExpectedOrigin: "o", Action: BrowserActScroll})
		_, e7 := b.Act(ctx, BrowserTabActParams{TabID: "t", ExpectedOrigin: "o", Action: "drag"})
		for i, err := range []error{e1, e2, e3, e4, e5, e6, e7} {
			var pe *ProtocolError
			if !errors.As(err, &pe) || pe.Reason != ErrInvalidParams {
				return "", fmt.Errorf("check %d: %v", i, err)
			}
		}
		return "ok", nil
	})
	if got := <-out; got != "ok" {
		t.Fatal(got)
	}
	if m := h.next(); m.has("method") {
		t.Fatalf("unexpected host call %s", m.raw)
	}
}

func TestHostErrorWithoutFrozenReasonIsResponseError(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		err := HostUI{}.PublishStatus(ctx, "s1", 1, "st", UIStatusPayload{Label: "x"})
		var re *ResponseError
		if errors.As(err, &re) {
			return fmt.Sprint(re.Code, " ", re.Message), nil
		}
		return "", err
	})
	m := h.next()
	h.sendJSON(map[string]any{"jsonrpc": "2.0", "id": m.fields["id"], "error": map[string]any{"code": -1, "message": "odd", "data": map[string]any{"reason": "internal", "retryable": false}}})
	if got := <-out; got != "-1 odd" {
		t.Fatal(got)
	}
}

func TestOversizedHostCallFailsLocally(t *testing.T) {
	h, _, out := withCallback(t, func(ctx context.Context) (string, error) {
		err := HostUI{}.PublishSurface(ctx, "s1", 1, "view", UISurfaceView, map[string]string{"body": strings.Repeat("x", FrameBytes)})
		var tooLarge *FrameTooLargeError
		if errors.As(err, &tooLarge) && tooLarge.Direction == "outbound" && tooLarge.Size > FrameBytes {
			return "too large", nil
		}
		return "", err
	})
	if got := <-out; got != "too large" {
		t.Fatal(got)
	}
	if m := h.next(); m.has("method") {
		t.Fatalf("the oversized request reached the host: %.200s", m.raw)
	}
}
