# datadesk: the two commands are `make run` and `make test`.
GO      ?= go
ADDR    ?= 127.0.0.1:8080
DATA    ?= ./data
BIN     := bin/datadesk
# -trimpath keeps the checkout's folder out of what is compiled, so a fresh
# clone reuses the build cache of the last one instead of compiling every
# package again.
export GOFLAGS := -buildvcs=false -trimpath

# npm's packages for the tests and the comparisons with Node. make deps
# installs them once per set of versions into the user's cache (a clone
# reuses them, as it reuses Go's module cache) and links .node to them;
# NODE_MODULES=dir puts them elsewhere.
NODE_PACKAGES := @duckdb/node-api@1.5.6-r.1 exceljs@4.4.0 axe-core@4.10.3 chdb@3.4.0
NODE_CACHE    ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/datadesk/node-$(shell echo '$(NODE_PACKAGES)' | cksum | cut -d' ' -f1)
NODE_MODULES  ?= .node

# The packages that build without cgo: value typing, the catalog and its
# plans, and DuckDB's dialect of them.
NOCGO_PACKAGES := ./engine/typing ./engine/catalog/... ./engine/ducksql

.PHONY: run test build deps vet nocgo fuzz fuzz-build fuzz-run bench bench-node clean

## build: compile the datadesk binary (the DuckDB library is linked in).
build:
	$(GO) build -o $(BIN) ./cmd/datadesk

## run: build and serve on an embedded default: one local data directory.
run: build
	./$(BIN) serve --addr $(ADDR) --data $(DATA)

## deps: fetch what the build and tests need: Go modules, and from Debian
## (installed with one apt-get when run as root): chromium for the browser
## tests, clickhouse-server for the cluster tests, zookeeper for the test of
## replicated cluster tables, haproxy for the test of
## owners over two nodes, python3-openpyxl and python3-xlrd for the tests
## that read workbooks with reference readers, libreoffice-writer-nogui for
## the test that converts a DOCX export to PDF, libreoffice-calc-nogui for
## the test that reads an XLSX export in LibreOffice, prometheus for
## promtool, which checks the alerting rules and runs their unit tests;
## and, from npm when Node is
## there, @duckdb/node-api for the comparison with DuckDB in Node,
## exceljs for the comparison of XLSX ingest with its streaming reader,
## axe-core for the accessibility test of every page and chdb (a current
## ClickHouse as a library) for the test of the cluster's statements on a
## server with window functions.
deps:
	@command -v $(GO) >/dev/null || { echo "Go 1.26 is needed: https://go.dev/dl/"; exit 1; }
	$(GO) mod download
	@missing=""; \
	if ! command -v chromium >/dev/null 2>&1 && [ -z "$$DATADESK_CHROMIUM" ]; then missing="$$missing chromium"; fi; \
	if ! command -v clickhouse-server >/dev/null 2>&1 && [ ! -x /usr/sbin/clickhouse-server ]; then missing="$$missing clickhouse-server"; fi; \
	if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then missing="$$missing haproxy"; fi; \
	if [ ! -f /usr/share/java/zookeeper.jar ]; then missing="$$missing zookeeper"; fi; \
	if ! /usr/bin/python3 -c 'import openpyxl' >/dev/null 2>&1; then missing="$$missing python3-openpyxl"; fi; \
	if ! /usr/bin/python3 -c 'import xlrd' >/dev/null 2>&1; then missing="$$missing python3-xlrd"; fi; \
	if ! command -v soffice >/dev/null 2>&1; then missing="$$missing libreoffice-writer-nogui"; fi; \
	if [ ! -f /usr/lib/libreoffice/program/libsclo.so ]; then missing="$$missing libreoffice-calc-nogui"; fi; \
	if ! command -v promtool >/dev/null 2>&1; then missing="$$missing prometheus"; fi; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian's$$missing for the tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
		else \
			echo "the tests need Debian's$$missing: sudo apt-get install$$missing"; exit 1; \
		fi; \
	fi
	@if command -v npm >/dev/null 2>&1; then \
		if [ "$(NODE_MODULES)" = .node ] && [ ! -e .node ]; then \
			mkdir -p "$(NODE_CACHE)" && ln -s "$(NODE_CACHE)" .node; fi; \
		if [ ! -d $(NODE_MODULES)/node_modules/@duckdb/node-api ] || [ ! -d $(NODE_MODULES)/node_modules/exceljs ] || [ ! -d $(NODE_MODULES)/node_modules/axe-core ] || [ ! -d $(NODE_MODULES)/node_modules/chdb ]; then \
			echo "installing @duckdb/node-api, exceljs, axe-core and chdb into $(NODE_MODULES) for the comparisons with Node, the pages' accessibility and a current ClickHouse"; \
			npm install --prefix $(NODE_MODULES)/ --no-save --no-package-lock --silent $(NODE_PACKAGES); \
		fi; \
	fi

## test: install what the tests need; gofmt, vet and the instrumented
## fuzz binaries side by side; fuzz briefly; run every test. The packages
## that need no C compiler are vetted without one (their tests run in the
## full run, which selects the same files: `nocgo` checks that it does and
## runs them without cgo again if not).
test: deps
	@$(MAKE) --no-print-directory -j3 vet nocgo fuzz-build
	@$(MAKE) --no-print-directory fuzz-run
	DATADESK_TEST_STRICT=1 $(GO) test -count=1 -timeout 45m ./...

## nocgo: prove the packages that need no C compiler build without one.
## go vet type-checks them and their tests with CGO_ENABLED=0; their tests
## themselves run without cgo only if that changes which files they hold.
NOCGO_FILES := {{.ImportPath}} {{.GoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}
nocgo:
	CGO_ENABLED=0 $(GO) vet $(NOCGO_PACKAGES)
	@if [ "$$(CGO_ENABLED=0 $(GO) list -f '$(NOCGO_FILES)' $(NOCGO_PACKAGES))" != "$$(CGO_ENABLED=1 $(GO) list -f '$(NOCGO_FILES)' $(NOCGO_PACKAGES))" ]; then \
		echo "cgo changes the files of $(NOCGO_PACKAGES): their tests once more without it"; \
		CGO_ENABLED=0 $(GO) test -count=1 $(NOCGO_PACKAGES); fi

## fuzz: run each fuzz target for FUZZTIME on top of its seeds and past
## findings (testdata/fuzz/<target>/, which plain go test also replays).
## One instrumented test binary per package serves all its targets, and a
## fresh cache keeps each run as short as the last. For a long hunt:
## make fuzz FUZZTIME=10m, then keep any failing input it writes. A target
## that fails only because its time ran out while a worker was busy (a race
## in Go 1.26's fuzzing, golang/go#75804), with no failing input, runs once
## more.
FUZZTIME    ?= 3s
FUZZ_INGEST := FuzzCSV FuzzJSON FuzzXLSX FuzzXLS FuzzBIFF FuzzSheetXML
FUZZ_API    := FuzzCleanFilename FuzzMCPRequest
FUZZ_TOOLCALL := FuzzToolArguments FuzzFilesCreate
FUZZ_CATALOG := FuzzAnalysisPlan
fuzz: fuzz-build
	@$(MAKE) --no-print-directory fuzz-run

# The four instrumented binaries are built side by side (go test takes
# -fuzz for one package at a time), so that one's link overlaps another's
# compile; the catalog's without cgo.
fuzz-build:
	@mkdir -p bin/fuzz
	@pids=""; \
	for p in ingest api toolcall; do $(GO) test -c -fuzz . -o bin/fuzz/$$p.test ./$$p & pids="$$pids $$!"; done; \
	CGO_ENABLED=0 $(GO) test -c -fuzz . -o bin/fuzz/catalog.test ./engine/catalog & pids="$$pids $$!"; \
	failed=0; for pid in $$pids; do wait $$pid || failed=1; done; exit $$failed

# Two lanes of targets at once, one worker each: the two cores are busy
# as with one target of two workers, in half the time; every target still
# runs FUZZTIME.
fuzz-run:
	@cache=$$(mktemp -d); trap 'rm -rf "$$cache"' EXIT; \
	one() { echo "fuzz $$1 $$2"; out="$$cache/out-$$2"; for try in 1 2; do \
		if (cd $$1 && $(CURDIR)/bin/fuzz/$$(basename $$1).test -test.run '^$$' -test.fuzz "^$$2$$" -test.fuzztime $(FUZZTIME) -test.fuzzminimizetime 10s \
			-test.fuzzcachedir "$$cache" -test.parallel 1 >"$$out" 2>&1); then return 0; fi; \
		if [ $$try = 1 ] && grep -q '^    context deadline exceeded$$' "$$out" && ! grep -q 'Failing input written' "$$out"; then \
			echo "fuzz $$1 $$2: the time ran out under a busy worker, no failing input (Go 1.26, golang/go#75804): once more"; continue; fi; \
		cat "$$out"; return 1; done; }; \
	( for t in $(FUZZ_INGEST); do one ingest $$t || exit 1; done ) & ingest=$$!; \
	( for t in $(FUZZ_API); do one api $$t || exit 1; done; \
	  for t in $(FUZZ_TOOLCALL); do one toolcall $$t || exit 1; done; \
	  for t in $(FUZZ_CATALOG); do one engine/catalog $$t || exit 1; done ) & others=$$!; \
	failed=0; wait $$ingest || failed=1; wait $$others || failed=1; exit $$failed

vet:
	@unformatted=$$(gofmt -l . 2>/dev/null); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...

## bench: every path against its baseline on a small table (about two
## minutes); writes results/report.md and results/chart.png. For the full
## run: go run ./cmd/datadesk-bench --rows 10000000 (it measures bin/datadesk)
bench: deps
	$(GO) build -o $(BIN) ./cmd/datadesk
	$(GO) run ./cmd/datadesk-bench --datadesk $(BIN) --rows 100000 --repeat 3 --out results $$([ -d $(NODE_MODULES)/node_modules/exceljs ] && echo --node-modules $(NODE_MODULES))

## bench-node: files.query_table over HTTP beside the same statements run by
## DuckDB in Node (@duckdb/node-api from npm, kept in .node/), 1,000,000 rows.
bench-node: deps
	@command -v npm >/dev/null || { echo "bench-node needs node and npm"; exit 1; }
	$(GO) build -o $(BIN) ./cmd/datadesk
	$(GO) run ./cmd/datadesk-bench --datadesk $(BIN) --rows 1000000 --repeat 9 --only nodejs --node-modules $(NODE_MODULES) --out results

clean:
	rm -rf bin
