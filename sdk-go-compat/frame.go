package extension

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
)

// lineReader splits NDJSON input into frames. The cap counts the trailing
// newline; trailing CR/LF is stripped, ASCII whitespace trimmed, and empty
// lines skipped.
type lineReader struct {
	r   *bufio.Reader
	eof bool
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64*1024)}
}

func (lr *lineReader) next() ([]byte, error) {
	for {
		if lr.eof {
			return nil, io.EOF
		}
		var line []byte
		for {
			chunk, err := lr.r.ReadSlice('\n')
			if len(line)+len(chunk) > FrameBytes {
				return nil, &FrameTooLargeError{Direction: "inbound", Size: len(line) + len(chunk), Limit: FrameBytes}
			}
			line = append(line, chunk...)
			if err == nil {
				break
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				lr.eof = true
				break
			}
			return nil, err
		}
		line = bytes.Trim(line, " \t\r\n\v\f")
		if len(line) == 0 {
			continue
		}
		return line, nil
	}
}

type frameKind int

const (
	frameRequest frameKind = iota
	frameNotification
	frameResponse
)

// frame is one validated inbound JSON-RPC message.
type frame struct {
	kind   frameKind
	id     json.RawMessage // the id token as sent; nil for notifications
	method string
	params json.RawMessage
	result json.RawMessage
	err    *wireError
	// errData is the error's data member, kept raw for mapCallError.
	errData json.RawMessage
}

// frameRejection is the transport-level answer to an invalid frame (no data).
type frameRejection struct {
	id      json.RawMessage
	code    int
	message string
}

var idPattern = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)

var nullID = json.RawMessage("null")

// validID reports whether an id token is an integer (no leading zeros, fits
// int64) or null.
func validID(raw json.RawMessage) bool {
	tok := bytes.TrimSpace(raw)
	if bytes.Equal(tok, nullID) {
		return true
	}
	if !idPattern.Match(tok) {
		return false
	}
	_, ok := parseID(tok)
	return ok
}

func parseID(tok []byte) (int64, bool) {
	var n int64
	if err := json.Unmarshal(tok, &n); err != nil {
		return 0, false
	}
	return n, true
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

func isString(raw json.RawMessage) (string, bool) {
	var s string
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '"' || json.Unmarshal(t, &s) != nil {
		return "", false
	}
	return s, true
}

// parseFrame applies the strict frame dialect (validateStrictFrame).
func parseFrame(line []byte) (*frame, *frameRejection) {
	if !json.Valid(line) {
		return nil, &frameRejection{id: nullID, code: CodeParseError, message: "parse error"}
	}
	invalid := func(id json.RawMessage) *frameRejection {
		if id == nil || !validID(id) {
			id = nullID
		}
		return &frameRejection{id: bytes.TrimSpace(id), code: CodeInvalidRequest, message: "invalid request"}
	}
	if !isObject(line) {
		return nil, invalid(nil)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, invalid(nil)
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return nil, invalid(nil)
	}
	if v, ok := isString(m["jsonrpc"]); !ok || v != "2.0" {
		return nil, invalid(id)
	}
	methodRaw, hasMethod := m["method"]
	_, hasResult := m["result"]
	errRaw, hasError := m["error"]
	params, hasParams := m["params"]
	if hasMethod {
		method, ok := isString(methodRaw)
		if !ok || method == "" || hasResult || hasError {
			return nil, invalid(id)
		}
		if hasParams && !isObject(params) {
			return nil, invalid(id)
		}
		f := &frame{kind: frameNotification, method: method, params: params}
		if hasID {
			f.kind = frameRequest
			f.id = bytes.TrimSpace(id)
		}
		return f, nil
	}
	if !hasID || hasParams || hasResult == hasError {
		return nil, invalid(id)
	}
	f := &frame{kind: frameResponse, id: bytes.TrimSpace(id)}
	if hasResult {
		f.result = m["result"]
		return f, nil
	}
	var e struct {
		Code    *json.Number    `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if !isObject(errRaw) || json.Unmarshal(errRaw, &e) != nil || e.Code == nil || e.Message == nil {
		return nil, invalid(id)
	}
	code, err := e.Code.Int64()
	if err != nil {
		return nil, invalid(id)
	}
	f.err = &wireError{Code: int(code), Message: *e.Message}
	f.errData = e.Data
	return f, nil
}
