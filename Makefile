# regionsched — build, test, benchmark, fuzz, lint and demo.
GO      ?= go
PKGS    := ./...
BIN     := bin/regionsched
FUZZTIME ?= 15s

.PHONY: all build test bench fuzz lint demo clean

all: build test

## build: compile every package and the regionsched command into bin/
build:
	$(GO) build $(PKGS)
	$(GO) build -o $(BIN) ./cmd/regionsched

## test: vet, then every test with the race detector (what CI runs)
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 $(PKGS)

## bench: the benchmarks of DESIGN.md section 9, with allocations
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## fuzz: a short run of each fuzz target
fuzz:
	@for target in $$(grep -rhoE '^func Fuzz[A-Za-z0-9_]+' --include='*_test.go' . | sed 's/^func //' | sort -u); do \
		pkg=$$(dirname $$(grep -rlE "^func $$target\(" --include='*_test.go' . | head -1)); \
		echo "fuzz $$target in $$pkg for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	done

## lint: formatting, vet and staticcheck
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)

## demo: the FLIP-119 example job, region by region, in all four modes
demo: build
	@for mode in all-blocking forward-pipelined-only pointwise-pipelined-only all-pipelined; do \
		./$(BIN) regions --mode $$mode examples/jobs/flip119.json; echo; \
	done

clean:
	rm -rf bin
