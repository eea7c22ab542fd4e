package extension

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

func contentError(message string) error {
	return &ProtocolError{Reason: ErrProtocolError, Message: message}
}

// ReadContentRef pages a host content reference back in chunks and returns
// its bytes once the reassembled length and SHA-256 match what the host
// reported. An unknown or expired ref is a *ProtocolError with reason
// content_ref_expired.
func ReadContentRef(ctx context.Context, ref string) ([]byte, error) {
	s := serverFrom(ctx)
	if s == nil {
		return nil, ErrNoConnection
	}
	if strings.TrimSpace(ref) == "" {
		return nil, fmt.Errorf("extension: a content ref is required")
	}
	var out []byte
	var offset int64
	total := int64(-1)
	for {
		answer, err := s.callHost(ctx, MethodHostContentRead, ContentReadParams{ContentRef: ref, Offset: offset})
		if err != nil {
			return nil, err
		}
		var r ContentReadResult
		if err := strictDecode(answer, &r); err != nil {
			s.log.Printf("extension: invalid host/content/read result: %v", err)
			return nil, contentError("invalid host/content/read result")
		}
		if r.ContentRef != ref || r.Offset != offset {
			return nil, contentError("host/content/read answered a different ref or offset")
		}
		if r.Encoding != ContentUTF8 {
			return nil, contentError("host/content/read answered an unknown encoding")
		}
		if r.TotalBytes > ContentRefObjectBytes {
			return nil, &ProtocolError{Reason: ErrFrameTooLarge, Message: fmt.Sprintf(
				"content ref is %d bytes, above the %d byte object cap", r.TotalBytes, ContentRefObjectBytes)}
		}
		if total >= 0 && r.TotalBytes != total {
			return nil, contentError("host/content/read changed totalBytes between chunks")
		}
		total = r.TotalBytes
		chunk, err := base64.StdEncoding.DecodeString(r.DataBase64)
		if err != nil {
			return nil, contentError("host/content/read returned invalid base64")
		}
		if len(chunk) > ContentRefChunkBytes {
			return nil, contentError("host/content/read returned an oversized chunk")
		}
		if int64(len(out))+int64(len(chunk)) > total {
			return nil, contentError("host/content/read returned more bytes than totalBytes")
		}
		out = append(out, chunk...)
		if r.NextOffset == nil {
			if int64(len(out)) != total {
				return nil, contentError(fmt.Sprintf("content ref reassembled to %d bytes, the host reported %d", len(out), total))
			}
			sum := sha256.Sum256(out)
			if !strings.EqualFold(hex.EncodeToString(sum[:]), r.SHA256) {
				return nil, contentError("content ref SHA-256 mismatch")
			}
			return out, nil
		}
		if *r.NextOffset <= offset || *r.NextOffset != offset+int64(len(chunk)) {
			return nil, contentError("host/content/read nextOffset does not follow the returned chunk")
		}
		offset = *r.NextOffset
	}
}

// ResolveExternalized returns a field's value: the inline raw value when the
// envelope is empty, otherwise the content of the single descriptor at
// pointer, paged from the host and checked against the descriptor's size
// and SHA-256. An inline value next to an envelope is a protocol error.
func ResolveExternalized(ctx context.Context, raw json.RawMessage, externalized []ExternalizedField, pointer string) (json.RawMessage, error) {
	if serverFrom(ctx) == nil {
		return nil, ErrNoConnection
	}
	return resolveExternalized(ctx, raw, externalized, pointer)
}

func resolveExternalized(ctx context.Context, raw json.RawMessage, externalized []ExternalizedField, pointer string) (json.RawMessage, error) {
	if len(externalized) == 0 {
		return raw, nil
	}
	if inline := bytes.TrimSpace(raw); len(inline) > 0 && !bytes.Equal(inline, []byte("null")) {
		return nil, contentError("document carries both an inline value and an externalized envelope")
	}
	if len(externalized) != 1 || externalized[0].JSONPointer != pointer {
		return nil, contentError("the externalized envelope must hold exactly the " + pointer + " descriptor")
	}
	d := externalized[0]
	if d.TotalBytes > ContentRefObjectBytes {
		return nil, &ProtocolError{Reason: ErrFrameTooLarge, Message: fmt.Sprintf(
			"externalized value is %d bytes, above the %d byte object cap", d.TotalBytes, ContentRefObjectBytes)}
	}
	data, err := ReadContentRef(ctx, d.ContentRef)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != d.TotalBytes {
		return nil, contentError(fmt.Sprintf("externalized value reassembled to %d bytes, the descriptor says %d", len(data), d.TotalBytes))
	}
	sum := sha256.Sum256(data)
	if !strings.EqualFold(hex.EncodeToString(sum[:]), d.SHA256) {
		return nil, contentError("externalized value SHA-256 mismatch")
	}
	if !json.Valid(data) {
		return nil, contentError("externalized value is not valid JSON")
	}
	return data, nil
}
