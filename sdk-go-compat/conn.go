package extension

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Outbound side of the connection: one write mutex for every frame, a
// bounded FIFO (256) for notifications drained by a single writer, and
// extension-to-host requests with ids counting from 1. Producers wait for
// room in the FIFO rather than failing the connection (see README).

const notificationQueueSize = 256

var errConnectionClosed = errors.New("extension: host connection closed")

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type outNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type outResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type outError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   wireError       `json:"error"`
}

// queued is one FIFO entry: a frame to write, or (frame nil) a flush marker
// closed once everything before it is written.
type queued struct {
	frame   []byte
	flushed chan struct{}
}

// encodeFrame is compact JSON without HTML escaping, newline-terminated, and
// refused above FrameBytes (newline included).
func encodeFrame(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("extension: encode frame: %w", err)
	}
	if buf.Len() > FrameBytes {
		return nil, &FrameTooLargeError{Direction: "outbound", Size: buf.Len(), Limit: FrameBytes}
	}
	return buf.Bytes(), nil
}

func (s *server) writeDirect(b []byte) {
	select {
	case <-s.done:
		return
	default:
	}
	s.writeFrame(b)
}

func (s *server) writeFrame(b []byte) {
	s.wmu.Lock()
	_, err := s.out.Write(b)
	s.wmu.Unlock()
	if err != nil {
		s.end(fmt.Errorf("extension: write to host: %w", err))
	}
}

func (s *server) writeLoop() {
	defer close(s.writerDone)
	write := func(item queued) {
		if item.frame != nil {
			s.writeFrame(item.frame)
		}
		if item.flushed != nil {
			close(item.flushed)
		}
	}
	for {
		select {
		case item := <-s.queue:
			write(item)
		case <-s.done:
			// Flush what was queued before the end, in order.
			for {
				select {
				case item := <-s.queue:
					write(item)
				default:
					return
				}
			}
		}
	}
}

// notifyWait queues one notification, waiting for room instead of failing
// the connection: a provider pump is the producer, and pausing it is the
// natural backpressure on a fast provider.
func (s *server) notifyWait(ctx context.Context, method string, params any) error {
	b, err := encodeFrame(outNotification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return err
	}
	select {
	case <-s.done:
		return errConnectionClosed
	default:
	}
	select {
	case s.queue <- queued{frame: b}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return errConnectionClosed
	}
}

// flushNotifications waits until every notification queued so far has been
// written (or the connection ended).
func (s *server) flushNotifications() {
	marker := queued{flushed: make(chan struct{})}
	select {
	case s.queue <- marker:
	case <-s.done:
		return
	}
	select {
	case <-marker.flushed:
	case <-s.writerDone:
	}
}

func (s *server) writeResult(id json.RawMessage, result any) error {
	b, err := encodeFrame(outResult{JSONRPC: "2.0", ID: id, Result: result})
	if err != nil {
		return err
	}
	s.writeDirect(b)
	return nil
}

func (s *server) writeError(id json.RawMessage, e wireError) {
	b, err := encodeFrame(outError{JSONRPC: "2.0", ID: id, Error: e})
	if err != nil {
		// An error object is small; this cannot exceed the frame cap.
		s.log.Printf("extension: could not encode an error answer: %v", err)
		return
	}
	s.writeDirect(b)
}

// call sends one extension-to-host request and waits for its answer.
func (s *server) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := s.nextID.Add(1)
	b, err := encodeFrame(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	answer := make(chan *frame, 1)
	s.pendingMu.Lock()
	s.pending[id] = answer
	s.pendingMu.Unlock()
	defer func() {
		s.pendingMu.Lock()
		delete(s.pending, id)
		s.pendingMu.Unlock()
	}()
	select {
	case <-s.done:
		return nil, errConnectionClosed
	default:
	}
	s.writeFrame(b)
	select {
	case f := <-answer:
		if f.err != nil {
			return nil, mapCallError(&ResponseError{Code: f.err.Code, Message: f.err.Message, Data: f.errData})
		}
		return f.result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.done:
		return nil, errConnectionClosed
	}
}

// deliver routes a host response to the request waiting for it.
func (s *server) deliver(f *frame) {
	id, ok := parseID(f.id)
	if !ok {
		if f.err != nil {
			s.log.Printf("extension: host reported an error without a request id: %d %s", f.err.Code, f.err.Message)
		}
		return
	}
	s.pendingMu.Lock()
	answer := s.pending[id]
	delete(s.pending, id)
	s.pendingMu.Unlock()
	if answer == nil {
		s.log.Printf("extension: dropping a host response for unknown request id %d", id)
		return
	}
	answer <- f
}
