package extension

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Provider serves extension-hosted models. Stream returns promptly with a
// channel the SDK pumps onto the wire: close it for a clean end, send an
// ErrorChunk to fail the stream, and stop when ctx ends (cancel, shutdown).
type Provider interface {
	Catalog(ctx context.Context) ([]ProviderDescriptor, error)

	Stream(ctx context.Context, req StreamRequest) (<-chan StreamChunk, error)
}

type StreamRequest struct {
	StreamID    string
	ProviderRef string
	Model       string
	Effort      string
	Request     ProviderRequest
}

type StreamChunk = ProviderChunk

func TextChunk(text string) StreamChunk { return StreamChunk{Type: ChunkText, Text: text} }

func ReasoningChunk(text, signature string) StreamChunk {
	return StreamChunk{Type: ChunkReasoning, Text: text, Signature: signature}
}

func UsageChunk(usage ProviderUsage) StreamChunk {
	return StreamChunk{Type: ChunkUsage, Usage: &usage}
}

func DoneChunk() StreamChunk { return StreamChunk{Type: ChunkDone} }

// ErrorChunk fails the stream; its message becomes stream/end.error (the
// frozen provider_failed text when blank). It crosses the wire, so keep it
// free of credentials.
func ErrorChunk(message string) StreamChunk {
	if strings.TrimSpace(message) == "" {
		message = frozenErrors[ErrProviderFailed].Message
	}
	return StreamChunk{Type: ChunkError, Error: &ProviderError{Code: ProviderFailed, Message: message}}
}

const invalidChunkMessage = "the extension provider produced an invalid chunk"

type streamHandle struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *server) handleProviderCatalog(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.opts.Provider == nil {
		return nil, MustProtocolError(ErrUnknownMethod)
	}
	if err := strictDecode(raw, &ProviderCatalogParams{}); err != nil {
		return nil, MustProtocolError(ErrInvalidParams)
	}
	providers, err := s.opts.Provider.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	if providers == nil {
		providers = []ProviderDescriptor{} // the wire needs an array, never null
	}
	return ProviderCatalogResult{Providers: providers}, nil
}

func (s *server) handleStreamOpen(ctx context.Context, raw json.RawMessage) (any, error) {
	if s.opts.Provider == nil {
		return nil, MustProtocolError(ErrUnknownMethod)
	}
	var p StreamOpenParams
	if err := strictDecode(raw, &p); err != nil {
		s.log.Printf("extension: invalid stream/open params: %v", err)
		return nil, MustProtocolError(ErrInvalidParams)
	}
	if err := p.Validate(); err != nil {
		s.log.Printf("extension: invalid stream/open params: %v", err)
		return nil, MustProtocolError(ErrInvalidParams)
	}
	// The stream outlives this request: its context is the connection's.
	streamCtx, cancel := context.WithCancel(s.ctx)
	handle := &streamHandle{cancel: cancel, done: make(chan struct{})}
	// Reserve the id before the provider runs, so a duplicate never starts
	// a second producer.
	s.streamsMu.Lock()
	if _, exists := s.streams[p.StreamID]; exists {
		s.streamsMu.Unlock()
		cancel()
		return nil, &ProtocolError{Reason: ErrProtocolError, Message: "duplicate stream id " + p.StreamID}
	}
	s.streams[p.StreamID] = handle
	s.streamsMu.Unlock()
	release := func() {
		cancel()
		s.streamsMu.Lock()
		if s.streams[p.StreamID] == handle {
			delete(s.streams, p.StreamID)
		}
		s.streamsMu.Unlock()
		close(handle.done)
	}
	chunks, err := s.opts.Provider.Stream(streamCtx, StreamRequest{
		StreamID:    p.StreamID,
		ProviderRef: p.ProviderRef,
		Model:       p.Model,
		Effort:      p.Effort,
		Request:     p.Request,
	})
	if err != nil {
		release()
		s.log.Printf("extension: provider stream %q failed to open: %v", p.StreamID, err)
		return nil, MustProtocolError(ErrProviderFailed)
	}
	if chunks == nil {
		release()
		return nil, errors.New("extension: Provider.Stream returned a nil channel")
	}
	return deferredResult{
		result: StreamOpenResult{Accepted: true},
		after:  func() { go s.pump(streamCtx, p.StreamID, p.SeqBase, chunks, release) },
		abort:  release,
	}, nil
}

func (s *server) handleStreamCancel(_ context.Context, raw json.RawMessage) (any, error) {
	var p StreamCancelParams
	if err := strictDecode(raw, &p); err != nil {
		return nil, MustProtocolError(ErrInvalidParams)
	}
	s.streamsMu.Lock()
	handle := s.streams[p.StreamID]
	s.streamsMu.Unlock()
	if handle == nil {
		return StreamCancelResult{Cancelled: false}, nil
	}
	handle.cancel()
	<-handle.done // the interrupted end is queued before this answer
	return StreamCancelResult{Cancelled: true}, nil
}

// stopStreams cancels every open stream and waits for their ends.
func (s *server) stopStreams() {
	s.streamsMu.Lock()
	handles := make([]*streamHandle, 0, len(s.streams))
	for _, h := range s.streams {
		handles = append(handles, h)
	}
	s.streamsMu.Unlock()
	for _, h := range handles {
		h.cancel()
	}
	for _, h := range handles {
		<-h.done
	}
}

// pump forwards one provider channel: chunks become stream/chunk with
// contiguous seqs from max(seqBase,1), then exactly one stream/end. Nothing
// follows a processed cancel.
func (s *server) pump(ctx context.Context, streamID string, seqBase int, chunks <-chan StreamChunk, release func()) {
	defer release()
	seq := int64(seqBase)
	if seq < 1 {
		seq = 1
	}
	var lastSeq int64
	end := func(errText string, interrupted bool) {
		// The end must be sent even after a cancel, so it waits on the
		// connection only.
		if err := s.notifyWait(s.ctx, MethodExtensionProviderStreamEnd, StreamEndParams{
			StreamID: streamID, LastSeq: lastSeq, Error: errText, Interrupted: interrupted,
		}); err != nil {
			s.log.Printf("extension: provider stream %q: could not send its end: %v", streamID, err)
		}
	}
	for {
		if ctx.Err() != nil {
			end("", true)
			return
		}
		select {
		case <-ctx.Done():
			end("", true)
			return
		case chunk, ok := <-chunks:
			if !ok {
				end("", false)
				return
			}
			if ctx.Err() != nil {
				end("", true)
				return
			}
			if chunk.Type == ChunkError {
				message := frozenErrors[ErrProviderFailed].Message
				if chunk.Error != nil && strings.TrimSpace(chunk.Error.Message) != "" {
					message = chunk.Error.Message
				}
				end(message, false)
				return
			}
			if err := chunk.Validate(); err != nil {
				s.log.Printf("extension: provider stream %q: %v", streamID, err)
				end(invalidChunkMessage, false)
				return
			}
			if err := s.notifyWait(ctx, MethodExtensionProviderStreamChunk, StreamChunkParams{
				StreamID: streamID, Seq: seq, Chunk: chunk,
			}); err != nil {
				if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
					end("", true)
					return
				}
				var tooLarge *FrameTooLargeError
				if errors.As(err, &tooLarge) {
					s.log.Printf("extension: provider stream %q: chunk %d is too large: %v", streamID, seq, err)
					end(invalidChunkMessage, false)
					return
				}
				s.log.Printf("extension: provider stream %q: could not send chunk %d: %v", streamID, seq, err)
				return
			}
			lastSeq = seq
			seq++
		}
	}
}
