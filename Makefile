# datadesk: the two commands are `make run` and `make test`.
GO      ?= go
ADDR    ?= 127.0.0.1:8080
DATA    ?= ./data
BIN     := bin/datadesk
export GOFLAGS := -buildvcs=false

.PHONY: run test build deps vet bench clean

## build: compile the datadesk binary (the DuckDB library is linked in).
build:
	$(GO) build -o $(BIN) ./cmd/datadesk

## run: build and serve on an embedded default: one local data directory.
run: build
	./$(BIN) serve --addr $(ADDR) --data $(DATA)

## deps: fetch what the build and tests need: Go modules, Debian's
## chromium for the browser tests and python3-openpyxl for reading exports
## back as analysts' scripts do (installed with apt when run as root).
deps:
	@command -v $(GO) >/dev/null || { echo "Go 1.26 is needed: https://go.dev/dl/"; exit 1; }
	$(GO) mod download
	@if ! command -v chromium >/dev/null 2>&1 && [ -z "$$DATADESK_CHROMIUM" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian's chromium for the browser tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
		else \
			echo "the browser tests need Chromium: sudo apt-get install chromium (or set DATADESK_CHROMIUM)"; exit 1; \
		fi; \
	fi
	@if ! /usr/bin/python3 -c 'import openpyxl' >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian's python3-openpyxl for the workbook read-back tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-openpyxl >/dev/null; \
		else \
			echo "the workbook read-back tests need openpyxl: sudo apt-get install python3-openpyxl"; exit 1; \
		fi; \
	fi

## test: install what the tests need and run every test.
test: deps vet
	$(GO) test -count=1 -timeout 45m ./...

vet:
	@unformatted=$$(gofmt -l . 2>/dev/null); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...

## bench: every path against its baseline on a small table (about two
## minutes); writes results/report.md and results/chart.png. For the full
## run: go run ./cmd/datadesk bench --rows 10000000
bench: deps
	$(GO) run ./cmd/datadesk bench --rows 100000 --repeat 3 --out results

clean:
	rm -rf bin
