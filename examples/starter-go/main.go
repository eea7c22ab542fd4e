// Command starter-go is a Reasonix extension sidecar: it rewrites every
// input.receive payload by prefixing the user's text with "[go] ".
package main

import (
	"context"
	"encoding/json"
	"log"
	"os"
	"strings"

	extension "github.com/esengine/DeepSeek-Reasonix/sdk/go"
)

// Prefix is put in front of every user input.
const Prefix = "[go] "

type starter struct{}

func (starter) Initialize(context.Context, extension.InitializeParams) (*extension.InitializeResult, error) {
	return &extension.InitializeResult{
		Name:          "starter-go",
		Version:       "0.1.0",
		Subscriptions: []string{string(extension.EventInputReceive)},
	}, nil
}

// rewriteInput prefixes the text. Empty input is left alone: emptying or
// keeping it empty must be a block, never a replace.
func rewriteInput(_ context.Context, _ string, payload json.RawMessage) (*extension.InterceptResult, error) {
	var input struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(payload, &input); err != nil {
		return nil, err
	}
	if strings.TrimSpace(input.Text) == "" || strings.HasPrefix(input.Text, Prefix) {
		return extension.Continue(), nil
	}
	return extension.Replace(map[string]string{"text": Prefix + input.Text})
}

func main() {
	err := extension.Serve(context.Background(), starter{}, extension.Options{
		Interceptors: map[string]extension.InterceptorFunc{
			string(extension.EventInputReceive): rewriteInput,
		},
	})
	if err != nil {
		log.Printf("starter-go: %v", err)
		os.Exit(1)
	}
	// Serve returned nil: the host shut us down or closed stdin.
}
