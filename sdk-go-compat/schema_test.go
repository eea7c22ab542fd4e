package extension

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The two upstream schemas, read from the shared spec folder beside the
// checkout, are compared with the Go types so that any drift fails here.

const schemaDir = "../../shared/spec/schema"

type schemaProp struct {
	Enum         []string    `json:"enum"`
	MinLength    *int        `json:"minLength"`
	Minimum      *float64    `json:"minimum"`
	Maximum      *float64    `json:"maximum"`
	Externalized bool        `json:"x-externalizable"`
	Items        *schemaProp `json:"items"`
}

type schemaDef struct {
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

type schemaDoc struct {
	Defs   map[string]schemaDef `json:"$defs"`
	Errors []struct {
		Reason    ErrorReason `json:"reason"`
		Code      int         `json:"jsonRpcCode"`
		Retryable bool        `json:"retryable"`
		Message   string      `json:"message"`
	} `json:"errors"`
	InterceptEvents []string       `json:"interceptEvents"`
	Limits          map[string]int `json:"limits"`
	Methods         map[string]any `json:"methods"`
	ProtocolID      string         `json:"protocolID"`
	ProtocolMajor   int            `json:"protocolMajor"`
}

func loadSchema(t *testing.T, name string) schemaDoc {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(schemaDir, name))
	if err != nil {
		t.Fatalf("read schema (the shared spec folder must sit beside the checkout): %v", err)
	}
	var doc schemaDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(doc.Defs) == 0 {
		t.Fatalf("%s has no $defs", name)
	}
	return doc
}

var wireTypes = map[string]reflect.Type{}

func init() {
	for _, v := range []any{
		BrowserTab{}, BrowserTabActParams{}, BrowserTabActResult{}, BrowserTabListParams{}, BrowserTabListResult{},
		BrowserTabOpenParams{}, BrowserTabOpenResult{}, BrowserTabSnapshotParams{}, BrowserTabSnapshotResult{},
		BrowserTabWaitParams{}, BrowserTabWaitResult{}, CapabilityWire{}, ContentReadParams{}, ContentReadResult{},
		EventParams{}, ExternalizedField{}, HostCapabilities{}, InitializeParams{}, InitializeResult{},
		InitializedParams{}, InterceptParams{}, InterceptResult{}, ManifestExpectation{}, ProviderCatalogParams{},
		ProviderCatalogResult{}, ProviderChunk{}, ProviderDescriptor{}, ProviderError{}, ProviderMessage{},
		ProviderRequest{}, ProviderResponseFormat{}, ProviderToolCall{}, ProviderToolSchema{}, ProviderUsage{},
		RequirementWire{}, ResourcesChangedParams{}, SessionContext{}, ShutdownParams{}, ShutdownResult{},
		StreamCancelParams{}, StreamCancelResult{}, StreamChunkParams{}, StreamEndParams{}, StreamOpenParams{},
		StreamOpenResult{}, UIActionDecl{}, UIActionParams{}, UIActionResult{}, UIPublishParams{}, UIPublishResult{},
		UIRequestParams{}, UIRequestResult{}, UISubmitParams{}, UISubmitResult{}, ToolCallParams{}, ToolCallResult{},
	} {
		t := reflect.TypeOf(v)
		wireTypes[t.Name()] = t
	}
}

func TestSchemaDefsMatchTheGoTypes(t *testing.T) {
	a := loadSchema(t, "extension-protocol-v2-browser.json")
	b := loadSchema(t, "extension-protocol-v2.json")
	enumsSeen := map[reflect.Type]map[string]bool{}
	for _, gen := range []struct {
		name  string
		doc   schemaDoc
		other schemaDoc
	}{{"A", a, b}, {"B", b, a}} {
		for defName, def := range gen.doc.Defs {
			goType, ok := wireTypes[defName]
			if !ok {
				t.Errorf("%s: $defs %s has no Go type", gen.name, defName)
				continue
			}
			fields := map[string]fieldInfo{}
			for _, f := range fieldsOf(goType) {
				fields[f.name] = f
			}
			required := map[string]bool{}
			for _, r := range def.Required {
				required[r] = true
			}
			for prop, rawProp := range def.Properties {
				f, ok := fields[prop]
				if !ok {
					t.Errorf("%s: %s.%s has no JSON tag on the Go struct", gen.name, defName, prop)
					continue
				}
				if f.required != required[prop] {
					t.Errorf("%s: %s.%s required=%t in the schema, Go tag says %t", gen.name, defName, prop, required[prop], f.required)
				}
				checkPropRules(t, gen.name+": "+defName+"."+prop, rawProp, f, goType, enumsSeen)
			}
			// Every Go field is in this generation or is the other one's addition.
			otherProps := gen.other.Defs[defName].Properties
			for name := range fields {
				_, here := def.Properties[name]
				_, there := otherProps[name]
				if !here && !there {
					t.Errorf("%s: Go field %s.%s is in neither schema", gen.name, defName, name)
				}
			}
		}
	}
	for typ, values := range enumsSeen {
		var schemaValues []string
		for v := range values {
			schemaValues = append(schemaValues, v)
		}
		sort.Strings(schemaValues)
		ours := append([]string(nil), enumValues[typ]...)
		sort.Strings(ours)
		if strings.Join(ours, ",") != strings.Join(schemaValues, ",") {
			t.Errorf("enum %s: Go %v, schemas %v", typ.Name(), ours, schemaValues)
		}
	}
	if len(enumsSeen) < 10 {
		t.Errorf("only %d enum types were compared", len(enumsSeen))
	}
}

func checkPropRules(t *testing.T, where string, raw json.RawMessage, f fieldInfo, owner reflect.Type, enums map[reflect.Type]map[string]bool) {
	t.Helper()
	var p schemaProp
	if string(raw) == "true" {
		return // any value
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	rules := map[string]string{}
	for _, r := range f.validate {
		name, arg, _ := strings.Cut(r, "=")
		rules[name] = arg
	}
	if p.MinLength != nil && *p.MinLength == 1 {
		if _, ok := rules["nonempty"]; !ok {
			t.Errorf("%s: schema minLength 1, Go tag lacks nonempty", where)
		}
	} else if _, ok := rules["nonempty"]; ok {
		t.Errorf("%s: Go tag says nonempty, schema has no minLength", where)
	}
	for _, bound := range []struct {
		name  string
		value *float64
	}{{"min", p.Minimum}, {"max", p.Maximum}} {
		arg, ok := rules[bound.name]
		switch {
		case bound.value == nil && ok:
			t.Errorf("%s: Go tag has %s=%s, schema has none", where, bound.name, arg)
		case bound.value != nil && !ok:
			t.Errorf("%s: schema %s %v, Go tag has none", where, bound.name, *bound.value)
		case bound.value != nil && arg != strconv.FormatFloat(*bound.value, 'f', -1, 64):
			t.Errorf("%s: schema %s %v, Go tag %s", where, bound.name, *bound.value, arg)
		}
	}
	if p.Externalized != (owner.Field(f.index).Tag.Get("externalizable") == "true") {
		t.Errorf("%s: x-externalizable %t disagrees with the Go tag", where, p.Externalized)
	}
	enumType := f.fieldType
	enumList := p.Enum
	if p.Items != nil && len(p.Items.Enum) > 0 {
		enumType, enumList = enumType.Elem(), p.Items.Enum
	}
	if len(enumList) > 0 {
		if _, ok := enumValues[enumType]; !ok {
			t.Errorf("%s: schema enum %v, Go type %s is not a closed enum", where, enumList, enumType)
			return
		}
		if enums[enumType] == nil {
			enums[enumType] = map[string]bool{}
		}
		for _, v := range enumList {
			enums[enumType][v] = true
		}
	} else if _, isEnum := enumValues[enumType]; isEnum {
		t.Errorf("%s: Go type %s is a closed enum, the schema has no enum", where, enumType)
	}
}

func TestSchemaTablesMatch(t *testing.T) {
	a := loadSchema(t, "extension-protocol-v2-browser.json")
	b := loadSchema(t, "extension-protocol-v2.json")
	if len(a.Errors) != len(frozenErrors) {
		t.Errorf("A has %d errors, Go %d", len(a.Errors), len(frozenErrors))
	}
	for _, doc := range []schemaDoc{a, b} {
		if doc.ProtocolID != ProtocolID || doc.ProtocolMajor != ProtocolMajor {
			t.Errorf("protocol %s/%d", doc.ProtocolID, doc.ProtocolMajor)
		}
		for _, e := range doc.Errors {
			spec, ok := frozenErrors[e.Reason]
			if !ok || spec.Code != e.Code || spec.Retryable != e.Retryable || spec.Message != e.Message {
				t.Errorf("error %s: schema %+v, Go %+v", e.Reason, e, spec)
			}
		}
		if strings.Join(doc.InterceptEvents, ",") != strings.Join(InterceptEvents(), ",") {
			t.Errorf("intercept events %v vs %v", doc.InterceptEvents, InterceptEvents())
		}
		limits := map[string]int{"frameBytes": FrameBytes, "externalizeFieldBytes": ExternalizeFieldBytes,
			"contentRefChunkBytes": ContentRefChunkBytes, "contentRefObjectBytes": ContentRefObjectBytes}
		for k, v := range doc.Limits {
			if limits[k] != v {
				t.Errorf("limit %s: schema %d, Go %d", k, v, limits[k])
			}
		}
		methods := map[string]bool{}
		for _, m := range []string{MethodExtensionEvent, MethodExtensionInitialize, MethodExtensionInitialized,
			MethodExtensionIntercept, MethodExtensionProviderCatalog, MethodExtensionProviderStreamCancel,
			MethodExtensionProviderStreamChunk, MethodExtensionProviderStreamEnd, MethodExtensionProviderStreamOpen,
			MethodExtensionResourcesChanged, MethodExtensionShutdown, MethodExtensionUIAction, MethodExtensionUISubmit,
			MethodHostBrowserTabAct, MethodHostBrowserTabList, MethodHostBrowserTabOpen, MethodHostBrowserTabSnapshot,
			MethodHostBrowserTabWait, MethodHostContentRead, MethodHostUIPublish, MethodHostUIRequest, MethodExtensionToolCall} {
			methods[m] = true
		}
		for m := range doc.Methods {
			if !methods[m] {
				t.Errorf("schema method %s has no Go constant", m)
			}
		}
	}
}
