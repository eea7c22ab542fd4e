module example.com/reasonix/starter-go

go 1.23

require github.com/esengine/DeepSeek-Reasonix/sdk/go v1.0.0

// The upstream SDK's import path, served by this repository's compatible
// module. A sidecar written against upstream needs only this line.
replace github.com/esengine/DeepSeek-Reasonix/sdk/go => ../../sdk-go-compat
