module github.com/esengine/DeepSeek-Reasonix/sdk/go

go 1.23
