// Package extension is a Go SDK for Reasonix extension sidecars speaking
// Extension Protocol v2 (reasonix.extension.v2) over stdio. It is
// source-compatible with the upstream Reasonix Go SDK (same import path,
// identifiers and wire types) and adds generation-B tools
// (Options.Tools, extension/tool/call). README.md lists where its behaviour
// deliberately differs from upstream's.
package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Handler is the one mandatory hook: Initialize runs once, before any other
// callback, and declares what the sidecar serves (within the manifest).
type Handler interface {
	Initialize(ctx context.Context, p InitializeParams) (*InitializeResult, error)
}

// InterceptorFunc rules on one hook point. payload is the point's raw JSON,
// already rehydrated from content refs. A nil result is Continue; an error is
// answered with the frozen internal error (or intercept_timeout when ctx's
// deadline, the host's budget, expired).
type InterceptorFunc func(ctx context.Context, event string, payload json.RawMessage) (*InterceptResult, error)

// UIHandler serves extension/ui/action and extension/ui/submit; a nil func
// answers unknown_method, a returned error accepted:false.
type UIHandler struct {
	Action func(ctx context.Context, actionID string, args map[string]string) error

	Submit func(ctx context.Context, surfaceID string, values map[string]any) error
}

// Options configures Serve. Stdin/Stdout default to os.Stdin/os.Stdout and
// Logger to stderr. After Initialize, callbacks run concurrently (up to 32
// at once): protect shared state.
type Options struct {
	Stdin  io.Reader
	Stdout io.Writer

	Name    string
	Version string

	Interceptors map[string]InterceptorFunc

	Observer func(ctx context.Context, event string, payload json.RawMessage)

	ResourcesChanged func(ctx context.Context, paths []string)

	Provider Provider

	UI UIHandler

	Shutdown func(ctx context.Context)

	Logger *log.Logger

	// Tools (generation B, not upstream) serves extension/tool/call, keyed
	// by tool name. Their names fill InitializeResult.Tools, sorted, when the
	// Handler leaves it nil.
	Tools map[string]ToolFunc
}

// maxInFlight bounds concurrently running inbound handlers.
const maxInFlight = 32

type serverState int

const (
	stateNew          serverState = iota // only initialize and shutdown
	stateInitializing                    // initialize accepted, handler running
	stateAnswered                        // initialize answered, waiting for initialized
	stateReady                           // barrier open
	stateShutdown                        // shutdown accepted
	stateClosed                          // connection ended
)

type requestHandler func(ctx context.Context, params json.RawMessage) (any, error)
type notificationHandler func(ctx context.Context, params json.RawMessage)

// deferredResult is a result whose after func runs once the answer has been
// written (a stream's pump, the close after shutdown); abort runs instead if
// the answer could not be written.
type deferredResult struct {
	result any
	after  func()
	abort  func()
}

type server struct {
	handler Handler
	opts    Options
	log     *log.Logger
	in      io.Reader
	out     io.Writer

	ctx    context.Context // handler context: carries the server, ends with the connection
	cancel context.CancelFunc

	wmu        sync.Mutex
	queue      chan queued
	writerDone chan struct{}

	nextID    atomic.Int64
	pendingMu sync.Mutex
	pending   map[int64]chan *frame

	slots chan struct{}

	mu    sync.Mutex
	state serverState

	streamsMu sync.Mutex
	streams   map[string]*streamHandle

	endOnce sync.Once
	done    chan struct{}
	endErr  error

	requests      map[string]requestHandler
	notifications map[string]notificationHandler
}

type serverKey struct{}

func serverFrom(ctx context.Context) *server {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(serverKey{}).(*server)
	return s
}

// Serve runs the sidecar on Options.Stdin/Stdout until the host closes the
// transport (nil), an extension/shutdown is answered (nil), ctx ends
// (ctx.Err()) or the connection fails (an error; the process should then
// exit non-zero).
func Serve(ctx context.Context, h Handler, opts Options) error {
	if h == nil {
		return errors.New("extension: Serve requires a non-nil Handler")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s := &server{
		handler:    h,
		opts:       opts,
		log:        opts.Logger,
		in:         opts.Stdin,
		out:        opts.Stdout,
		queue:      make(chan queued, notificationQueueSize),
		writerDone: make(chan struct{}),
		pending:    make(map[int64]chan *frame),
		slots:      make(chan struct{}, maxInFlight),
		streams:    make(map[string]*streamHandle),
		done:       make(chan struct{}),
	}
	if s.in == nil {
		s.in = os.Stdin
	}
	if s.out == nil {
		s.out = os.Stdout
	}
	if s.log == nil {
		s.log = log.New(os.Stderr, "reasonix-extension: ", log.LstdFlags)
	}
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.ctx = context.WithValue(base, serverKey{}, s)
	s.cancel = cancel
	s.requests = map[string]requestHandler{
		MethodExtensionIntercept:            s.handleIntercept,
		MethodExtensionProviderCatalog:      s.handleProviderCatalog,
		MethodExtensionProviderStreamOpen:   s.handleStreamOpen,
		MethodExtensionProviderStreamCancel: s.handleStreamCancel,
		MethodExtensionUIAction:             s.handleUIAction,
		MethodExtensionUISubmit:             s.handleUISubmit,
		MethodExtensionToolCall:             s.handleToolCall,
	}
	s.notifications = map[string]notificationHandler{
		MethodExtensionEvent:            s.handleEvent,
		MethodExtensionResourcesChanged: s.handleResourcesChanged,
	}

	go s.writeLoop()
	go s.readLoop()
	select {
	case <-s.done:
	case <-ctx.Done():
		s.end(ctx.Err())
	}
	// Unblock the reader where the input can be closed (pipes, files).
	if closer, ok := s.in.(io.Closer); ok {
		_ = closer.Close()
	}
	<-s.writerDone
	return s.endErr
}

// end finishes the connection once: in-flight handlers and streams are
// cancelled, pending host calls fail, queued notifications are flushed.
func (s *server) end(err error) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		s.state = stateClosed
		s.mu.Unlock()
		s.endErr = err
		s.cancel()
		close(s.done)
	})
}

func (s *server) readLoop() {
	lines := newLineReader(s.in)
	for {
		line, err := lines.next()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			var tooLarge *FrameTooLargeError
			switch {
			case errors.As(err, &tooLarge):
				// Unlike upstream, the host learns why the connection ends.
				s.writeError(nullID, protocolWireError(ErrFrameTooLarge, ""))
				s.log.Printf("extension: %v", err)
				s.end(err)
			case errors.Is(err, io.EOF):
				s.end(nil)
			default:
				s.end(fmt.Errorf("extension: read from host: %w", err))
			}
			return
		}
		select {
		case <-s.done:
			return
		default:
		}
		f, rejection := parseFrame(line)
		if rejection != nil {
			s.writeError(rejection.id, wireError{Code: rejection.code, Message: rejection.message})
			continue
		}
		switch f.kind {
		case frameResponse:
			s.deliver(f)
		case frameRequest:
			s.onRequest(f)
		case frameNotification:
			s.onNotification(f)
		}
	}
}

// onRequest applies the handshake barrier on the read loop, so no later
// frame can overtake a state change, then starts the handler.
func (s *server) onRequest(f *frame) {
	s.mu.Lock()
	state := s.state
	if f.method == MethodExtensionShutdown && state < stateShutdown {
		var p ShutdownParams
		if err := strictDecode(f.params, &p); err != nil {
			s.mu.Unlock()
			s.log.Printf("extension: invalid shutdown params: %v", err)
			s.writeError(f.id, protocolWireError(ErrInvalidParams, ""))
			return
		}
		s.state = stateShutdown
		s.mu.Unlock()
		s.start(f.id, func(ctx context.Context) (any, error) { return s.shutdown(ctx, p) }, true)
		return
	}
	switch state {
	case stateNew:
		if f.method == MethodExtensionInitialize {
			var p InitializeParams
			if err := strictDecode(f.params, &p); err != nil {
				// Not fatal and, unlike upstream, the attempt is not used up.
				s.mu.Unlock()
				s.log.Printf("extension: invalid initialize params: %v", err)
				s.writeError(f.id, protocolWireError(ErrInvalidParams, ""))
				return
			}
			s.state = stateInitializing
			s.mu.Unlock()
			s.start(f.id, func(ctx context.Context) (any, error) { return s.initialize(ctx, p) }, true)
			return
		}
	case stateReady:
		if f.method == MethodExtensionInitialize {
			break
		}
		s.mu.Unlock()
		h := s.requests[f.method]
		if h == nil {
			s.writeError(f.id, protocolWireError(ErrUnknownMethod, ""))
			return
		}
		params := f.params
		s.start(f.id, func(ctx context.Context) (any, error) { return h(ctx, params) }, false)
		return
	}
	s.mu.Unlock()
	method := f.method
	if len(method) > 128 {
		method = method[:128] + "..."
	}
	var message string
	switch {
	case f.method == MethodExtensionInitialize && state < stateShutdown:
		message = "extension protocol violation: host sent a second extension/initialize"
	case state < stateReady:
		message = fmt.Sprintf("extension protocol violation: host sent request %q before the handshake completed", method)
	default:
		message = fmt.Sprintf("extension protocol violation: host sent request %q after shutdown", method)
	}
	s.writeError(f.id, protocolWireError(ErrProtocolError, message))
}

func (s *server) onNotification(f *frame) {
	s.mu.Lock()
	state := s.state
	if f.method == MethodExtensionInitialized {
		switch state {
		case stateAnswered:
			if err := strictDecode(f.params, &InitializedParams{}); err != nil {
				s.log.Printf("extension: initialized carried params: %v", err)
			}
			s.state = stateReady
		case stateReady:
		default:
			s.log.Printf("extension: dropping extension/initialized: the initialize answer has not been sent")
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if state != stateReady {
		s.log.Printf("extension: dropping notification %q before the handshake completed", f.method)
		return
	}
	h := s.notifications[f.method]
	if h == nil {
		s.log.Printf("extension: dropping unknown notification %q", f.method)
		return
	}
	select {
	case s.slots <- struct{}{}:
	default:
		s.log.Printf("extension: dropping notification %q: %d handlers in flight", f.method, maxInFlight)
		return
	}
	params := f.params
	go func() {
		defer func() { <-s.slots }()
		defer func() {
			if r := recover(); r != nil {
				s.log.Printf("extension: notification handler for %q panicked: %v\n%s", f.method, r, debug.Stack())
			}
		}()
		h(s.ctx, params)
	}()
}

// start runs one request handler in its own goroutine. Lifecycle requests
// (exempt) bypass the in-flight bound so the host can always stop the
// sidecar.
func (s *server) start(id json.RawMessage, run func(ctx context.Context) (any, error), exempt bool) {
	if !exempt {
		select {
		case s.slots <- struct{}{}:
		default:
			s.writeError(id, wireError{Code: CodeServerBusy, Message: "server busy"})
			return
		}
	}
	go func() {
		if !exempt {
			defer func() { <-s.slots }()
		}
		result, err := s.runHandler(run)
		s.answer(id, result, err)
	}()
}

func (s *server) runHandler(run func(ctx context.Context) (any, error)) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Printf("extension: handler panicked: %v\n%s", r, debug.Stack())
			result, err = nil, MustProtocolError(ErrInternal)
		}
	}()
	return run(s.ctx)
}

func (s *server) answer(id json.RawMessage, result any, err error) {
	if err != nil {
		var pe *ProtocolError
		if !errors.As(err, &pe) {
			s.log.Printf("extension: handler failed: %v", err)
		}
		s.writeError(id, toWireError(err))
		var fatal *fatalError
		if errors.As(err, &fatal) {
			s.end(fatal.err)
		}
		return
	}
	deferred, isDeferred := result.(deferredResult)
	if isDeferred {
		result = deferred.result
	}
	if werr := s.writeResult(id, result); werr != nil {
		s.log.Printf("extension: could not send a result: %v", werr)
		s.writeError(id, toWireError(werr))
		if isDeferred && deferred.abort != nil {
			deferred.abort()
		}
		return
	}
	if isDeferred && deferred.after != nil {
		deferred.after()
	}
}

// Lifecycle

func (s *server) initialize(ctx context.Context, p InitializeParams) (any, error) {
	if err := checkProtocolVersion(p.ProtocolID, p.ProtocolVersion); err != nil {
		s.log.Printf("extension: %v (protocolId %q, protocolVersion %q)", err, p.ProtocolID, p.ProtocolVersion)
		return nil, &fatalError{err: err}
	}
	result, err := s.handler.Initialize(ctx, p)
	if err != nil {
		return nil, &fatalError{err: err}
	}
	if result == nil {
		return nil, &fatalError{err: errors.New("extension: Initialize returned a nil result")}
	}
	result.ProtocolVersion = ProtocolVersion
	if result.Name == "" {
		result.Name = s.opts.Name
	}
	if result.Version == "" {
		result.Version = s.opts.Version
	}
	if strings.TrimSpace(result.Name) == "" || strings.TrimSpace(result.Version) == "" {
		return nil, &fatalError{err: errors.New("extension: the initialize result needs a name and a version (set them or Options.Name/Version)")}
	}
	if result.StateSchemaVersion < 0 {
		return nil, &fatalError{err: errors.New("extension: stateSchemaVersion must be >= 0")}
	}
	if result.Tools == nil && len(s.opts.Tools) > 0 {
		result.Tools = make([]string, 0, len(s.opts.Tools))
		for name := range s.opts.Tools {
			result.Tools = append(result.Tools, name)
		}
		sort.Strings(result.Tools)
	}
	s.mu.Lock()
	// Set before the answer is written: the host's initialized may follow
	// the answer faster than this goroutine would run again.
	if s.state == stateInitializing {
		s.state = stateAnswered
	}
	s.mu.Unlock()
	return result, nil
}

func checkProtocolVersion(id, version string) error {
	if id != ProtocolID {
		return MustProtocolError(ErrUnsupportedVersion)
	}
	major, err := strconv.Atoi(version)
	if err != nil {
		return MustProtocolError(ErrProtocolError)
	}
	if major != ProtocolMajor {
		return MustProtocolError(ErrUnsupportedVersion)
	}
	return nil
}

func (s *server) shutdown(ctx context.Context, p ShutdownParams) (any, error) {
	if s.opts.Shutdown != nil {
		hookCtx, cancel := ctx, context.CancelFunc(func() {})
		if p.TimeoutMillis > 0 {
			hookCtx, cancel = context.WithTimeout(ctx, time.Duration(p.TimeoutMillis)*time.Millisecond)
		}
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			defer func() {
				if r := recover(); r != nil {
					s.log.Printf("extension: Shutdown hook panicked: %v", r)
				}
			}()
			s.opts.Shutdown(hookCtx)
		}()
		select {
		case <-finished:
		case <-hookCtx.Done():
			s.log.Printf("extension: Shutdown hook did not return within %dms", p.TimeoutMillis)
		}
		cancel()
	}
	// Open streams end interrupted, and their ends reach the host before the
	// shutdown answer.
	s.stopStreams()
	s.flushNotifications()
	return deferredResult{
		result: ShutdownResult{Accepted: true},
		after:  func() { s.end(nil) },
		abort:  func() { s.end(nil) },
	}, nil
}

// checkReady gates extension-to-host calls on the open barrier.
func (s *server) checkReady() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateReady {
		return ErrNotReady
	}
	return nil
}

// callHost is one extension-to-host request behind the barrier.
func (s *server) callHost(ctx context.Context, method string, params any) (json.RawMessage, error) {
	if err := s.checkReady(); err != nil {
		return nil, err
	}
	return s.call(ctx, method, params)
}
