package extension

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Reads ../shared/spec/GO_SDK_API.md (the upstream surface) and compares
// every struct, interface and named type it declares with this package:
// field names, order, types and tags. Fields this module adds (generation
// B) may only follow upstream's fields and must be listed here.
var addedFields = map[string][]string{
	"Options":             {"Tools"},
	"InitializeResult":    {"Tools"},
	"ManifestExpectation": {"Tools"},
}

func registerAPITypes() map[string]reflect.Type {
	apiTypes := map[string]reflect.Type{}
	for _, v := range []any{
		StreamRequest{}, UIHandler{}, Options{}, HostUI{}, HostBrowser{}, InputPrompt{}, SelectPrompt{},
		MultiSelectPrompt{}, ProtocolError{}, ResponseError{}, FrameTooLargeError{}, UIStatusPayload{},
		UICardPayload{}, UIKeyValue{}, UIActionRef{}, UIFormPayload{}, UIFormField{}, UINotificationPayload{},
		ProtocolErrorData{}, InterceptorFunc(nil), InterceptEvent(""), UIHostKind(""), InterceptDecision(""),
		ProviderChunkType(""), ProviderErrorCode(""), ProviderRole(""), BrowserActAction(""),
		BrowserTabDisposition(""), BrowserWaitUntil(""), ContentEncoding(""), UISurfaceKind(""),
		UIRequestKind(""), UISeverity(""), UIFieldKind(""), ErrorReason(""),
	} {
		t := reflect.TypeOf(v)
		apiTypes[t.Name()] = t
	}
	for name, t := range wireTypes {
		apiTypes[name] = t
	}
	apiTypes["Handler"] = reflect.TypeOf((*Handler)(nil)).Elem()
	apiTypes["Provider"] = reflect.TypeOf((*Provider)(nil)).Elem()
	return apiTypes
}

var funcParams = regexp.MustCompile(`func\(([^()]*)\)`)

// normalizeType turns a declaration's type (with parameter names) into the
// form reflect prints, without the package qualifier.
func normalizeType(s string) string {
	s = funcParams.ReplaceAllStringFunc(s, func(f string) string {
		inner := f[len("func(") : len(f)-1]
		if strings.TrimSpace(inner) == "" {
			return "func()"
		}
		var types []string
		for _, p := range strings.Split(inner, ",") {
			fields := strings.Fields(p)
			types = append(types, fields[len(fields)-1])
		}
		return "func(" + strings.Join(types, ", ") + ")"
	})
	// StreamChunk is an alias: reflect prints ProviderChunk.
	return regexp.MustCompile(`\bStreamChunk\b`).ReplaceAllString(s, "ProviderChunk")
}

func reflectTypeString(t reflect.Type) string {
	s := strings.ReplaceAll(t.String(), "extension.", "")
	// Newer Go releases define json.RawMessage as an alias of jsontext.Value.
	s = strings.ReplaceAll(s, "jsontext.Value", "json.RawMessage")
	return strings.ReplaceAll(s, "interface {}", "any")
}

func TestUpstreamTypeDeclarations(t *testing.T) {
	raw, err := os.ReadFile("../../shared/spec/GO_SDK_API.md")
	if err != nil {
		t.Fatalf("read the upstream API listing: %v", err)
	}
	doc := string(raw)
	code := doc[strings.Index(doc, "```go")+5 : strings.LastIndex(doc, "```")]
	lines := strings.Split(code, "\n")
	apiTypes := registerAPITypes()
	checked := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		m := regexp.MustCompile(`^type (\w+) (.*)$`).FindStringSubmatch(line)
		if m == nil {
			continue
		}
		name, rest := m[1], m[2]
		checked++
		switch {
		case strings.HasPrefix(rest, "= "):
			alias := strings.TrimPrefix(rest, "= ")
			if name != "StreamChunk" || alias != "ProviderChunk" || reflect.TypeOf(StreamChunk{}) != reflect.TypeOf(ProviderChunk{}) {
				t.Errorf("alias %s = %s", name, alias)
			}
		case rest == "struct{}":
			if got, ok := apiTypes[name]; !ok || got.Kind() != reflect.Struct || got.NumField() != 0 {
				t.Errorf("%s must be an empty struct", name)
			}
		case rest == "struct {" || rest == "interface {":
			var body []string
			for i++; lines[i] != "}"; i++ {
				if strings.TrimSpace(lines[i]) != "" {
					body = append(body, lines[i])
				}
			}
			got, ok := apiTypes[name]
			if !ok {
				t.Errorf("%s is not registered in the test", name)
				continue
			}
			if rest == "interface {" {
				checkInterface(t, name, got, body)
			} else {
				checkStruct(t, name, got, body)
			}
		default:
			got, ok := apiTypes[name]
			if !ok || underlying(got) != normalizeType(rest) {
				t.Errorf("type %s %s: have %v", name, rest, got)
			}
		}
	}
	if checked < 90 {
		t.Fatalf("only %d type declarations found", checked)
	}
}

func checkStruct(t *testing.T, name string, got reflect.Type, body []string) {
	t.Helper()
	var fields []reflect.StructField
	for i := 0; i < got.NumField(); i++ {
		fields = append(fields, got.Field(i))
	}
	if len(fields) != len(body)+len(addedFields[name]) {
		t.Errorf("%s has %d fields, upstream %d (+%d added)", name, len(fields), len(body), len(addedFields[name]))
		return
	}
	for i, line := range body {
		parts := splitField(line)
		f := fields[i]
		if f.Name != parts[0] {
			t.Errorf("%s field %d: %s, upstream %s", name, i, f.Name, parts[0])
			continue
		}
		if reflectTypeString(f.Type) != normalizeType(parts[1]) {
			t.Errorf("%s.%s: type %s, upstream %s", name, f.Name, reflectTypeString(f.Type), parts[1])
		}
		wantTag := ""
		if len(parts) > 2 {
			wantTag = strings.Trim(parts[2], "`")
		}
		if string(f.Tag) != wantTag {
			t.Errorf("%s.%s: tag %q, upstream %q", name, f.Name, f.Tag, wantTag)
		}
	}
	for i, added := range addedFields[name] {
		if fields[len(body)+i].Name != added {
			t.Errorf("%s: added field %d is %s, want %s", name, i, fields[len(body)+i].Name, added)
		}
	}
}

// splitField splits "Name Type `tag`" whether the listing aligned it with
// tabs or wrote it with single spaces.
func splitField(line string) []string {
	line = strings.TrimSpace(line)
	name, rest, _ := strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
	rest = strings.TrimSpace(rest)
	if typ, tag, hasTag := strings.Cut(rest, "`"); hasTag {
		return []string{name, strings.TrimSpace(typ), "`" + tag}
	}
	return []string{name, rest}
}

func checkInterface(t *testing.T, name string, got reflect.Type, body []string) {
	t.Helper()
	if got.NumMethod() != len(body) {
		t.Errorf("%s has %d methods, upstream %d", name, got.NumMethod(), len(body))
	}
	for _, line := range body {
		decl := strings.TrimSpace(line)
		method := decl[:strings.Index(decl, "(")]
		m, ok := got.MethodByName(method)
		if !ok {
			t.Errorf("%s lacks %s", name, method)
			continue
		}
		want := normalizeType("func" + decl[len(method):])
		if reflectTypeString(m.Type) != want {
			t.Errorf("%s.%s: %s, upstream %s", name, method, reflectTypeString(m.Type), want)
		}
	}
}

// underlying prints a named type's underlying type (string, a func type).
func underlying(t reflect.Type) string {
	if t == nil {
		return ""
	}
	if t.Kind() == reflect.String {
		return "string"
	}
	if t.Kind() == reflect.Func {
		return reflectTypeString(reflect.FuncOf(inTypes(t), outTypes(t), t.IsVariadic()))
	}
	return t.Kind().String()
}

func inTypes(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	for i := 0; i < t.NumIn(); i++ {
		out = append(out, t.In(i))
	}
	return out
}

func outTypes(t reflect.Type) []reflect.Type {
	var out []reflect.Type
	for i := 0; i < t.NumOut(); i++ {
		out = append(out, t.Out(i))
	}
	return out
}
