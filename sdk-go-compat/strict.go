package extension

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// DecodeError says why a params or result document was refused by the
// strict decoder; Path is a JSON pointer to the offending member ("" for the
// document itself).
type DecodeError struct {
	Path   string
	Reason string
}

func (e *DecodeError) Error() string {
	if e.Path == "" {
		return "extension: strict decode: " + e.Reason
	}
	return "extension: strict decode at " + e.Path + ": " + e.Reason
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// strictDecode decodes one params or result object into v (a pointer to a
// struct) with the dialect's rules: a missing document is {}, member names
// match exactly, unknown members and trailing JSON are refused, required
// members (no omitempty) must be present and non-null unless tagged
// externalizable/nullable, and validate tags and closed enums are enforced.
// An optional member sent as null is treated as absent.
func strictDecode(raw json.RawMessage, v any) error {
	doc := bytes.TrimSpace(raw)
	if len(doc) == 0 {
		doc = []byte("{}")
	}
	// One JSON value and nothing after it.
	dec := json.NewDecoder(bytes.NewReader(doc))
	var first json.RawMessage
	if err := dec.Decode(&first); err != nil {
		return &DecodeError{Reason: err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &DecodeError{Reason: "trailing data after the JSON document"}
	}
	// Member names and presence first, for precise paths.
	if err := checkMembers(first, reflect.TypeOf(v).Elem(), ""); err != nil {
		return err
	}
	typed := json.NewDecoder(bytes.NewReader(first))
	typed.DisallowUnknownFields()
	if err := typed.Decode(v); err != nil {
		return &DecodeError{Reason: err.Error()}
	}
	return checkValues(reflect.ValueOf(v).Elem(), "")
}

type fieldInfo struct {
	name      string
	index     int
	required  bool
	nullable  bool
	validate  []string
	fieldType reflect.Type
}

var fieldCache sync.Map // reflect.Type -> []fieldInfo

func fieldsOf(t reflect.Type) []fieldInfo {
	if cached, ok := fieldCache.Load(t); ok {
		return cached.([]fieldInfo)
	}
	var out []fieldInfo
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		info := fieldInfo{
			name:      name,
			index:     i,
			required:  !strings.Contains(","+opts+",", ",omitempty,"),
			nullable:  f.Tag.Get("externalizable") == "true" || f.Tag.Get("nullable") == "true",
			fieldType: f.Type,
		}
		if rules := f.Tag.Get("validate"); rules != "" {
			info.validate = strings.Split(rules, ",")
		}
		out = append(out, info)
	}
	fieldCache.Store(t, out)
	return out
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// checkMembers walks the raw document beside the Go type: exact member
// names, required presence, no nulls where a value is required.
func checkMembers(raw json.RawMessage, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil || members == nil {
			return &DecodeError{Path: path, Reason: "must be a JSON object"}
		}
		fields := fieldsOf(t)
		known := make(map[string]bool, len(fields))
		for _, f := range fields {
			known[f.name] = true
		}
		for name := range members {
			if !known[name] {
				return &DecodeError{Path: path + "/" + name, Reason: "unknown member"}
			}
		}
		for _, f := range fields {
			value, present := members[f.name]
			if !present {
				if f.required {
					return &DecodeError{Path: path + "/" + f.name, Reason: "required member is missing"}
				}
				continue
			}
			if isNull(value) {
				if f.required && !f.nullable {
					return &DecodeError{Path: path + "/" + f.name, Reason: "required member is null"}
				}
				continue
			}
			if err := checkMembers(value, f.fieldType, path+"/"+f.name); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if t == rawMessageType || t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return &DecodeError{Path: path, Reason: "must be a JSON array"}
		}
		for i, item := range items {
			p := path + "/" + strconv.Itoa(i)
			if isNull(item) && t.Elem().Kind() != reflect.Interface {
				return &DecodeError{Path: p, Reason: "array item is null"}
			}
			if err := checkMembers(item, t.Elem(), p); err != nil {
				return err
			}
		}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return nil
		}
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return &DecodeError{Path: path, Reason: "must be a JSON object"}
		}
		for name, value := range members {
			if isNull(value) {
				return &DecodeError{Path: path + "/" + name, Reason: "map value is null"}
			}
		}
	}
	return nil
}

// checkValues enforces validate tags and closed enums on the decoded value.
func checkValues(v reflect.Value, path string) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkValues(v.Elem(), path)
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			fv := v.Field(f.index)
			p := path + "/" + f.name
			if err := checkRules(fv, f, p); err != nil {
				return err
			}
			if err := checkEnum(fv, f.required, p); err != nil {
				return err
			}
			if err := checkValues(fv, p); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v.Type() == rawMessageType {
			return nil
		}
		for i := 0; i < v.Len(); i++ {
			p := path + "/" + strconv.Itoa(i)
			if err := checkEnum(v.Index(i), true, p); err != nil {
				return err
			}
			if err := checkValues(v.Index(i), p); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkEnum(v reflect.Value, required bool, path string) error {
	if v.Kind() != reflect.String {
		return nil
	}
	if _, isEnum := enumValues[v.Type()]; !isEnum {
		return nil
	}
	value := v.String()
	if value == "" && !required {
		return nil
	}
	if !enumContains(v.Type(), value) {
		return &DecodeError{Path: path, Reason: fmt.Sprintf("%q is not an allowed value", value)}
	}
	return nil
}

func checkRules(v reflect.Value, f fieldInfo, path string) error {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil
		}
		v = v.Elem()
	}
	for _, rule := range f.validate {
		name, arg, _ := strings.Cut(rule, "=")
		switch name {
		case "nonempty":
			if v.Kind() == reflect.String && strings.TrimSpace(v.String()) == "" {
				return &DecodeError{Path: path, Reason: "must not be blank"}
			}
		case "sha256":
			if v.Kind() == reflect.String && !isSHA256Hex(v.String()) {
				return &DecodeError{Path: path, Reason: "must be a 64-digit hex SHA-256"}
			}
		case "min", "max":
			bound, err := strconv.ParseFloat(arg, 64)
			if err != nil {
				continue
			}
			n, ok := numberOf(v)
			if !ok {
				continue
			}
			if name == "min" && n < bound {
				return &DecodeError{Path: path, Reason: "must be >= " + arg}
			}
			if name == "max" && n > bound {
				return &DecodeError{Path: path, Reason: "must be <= " + arg}
			}
		}
	}
	return nil
}

func numberOf(v reflect.Value) (float64, bool) {
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(v.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(v.Uint()), true
	case reflect.Float32, reflect.Float64:
		return v.Float(), true
	}
	return 0, false
}

// isSHA256Hex accepts 64 hex digits in either case; the digest comparison
// itself is case-insensitive, as in the upstream SDK.
func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func itoa(i int) string { return strconv.Itoa(i) }
