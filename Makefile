# regionsched — build, test, benchmark, fuzz, lint and demo.
GO      ?= go
PKGS    := ./...
BIN     := bin/regionsched
# KBIN is the program of the Kubernetes backend (a module of its own, with client-go), which
# regionsched run --kubernetes and leftovers --kubernetes run from beside bin/regionsched.
KBIN    := bin/regionsched-kubernetes
FUZZTIME ?= 15s
# VERSION is stamped into the command (regionsched --version): what git describe says of the
# checkout, or nothing without git or a repository (the command then reports the module
# version of its build information). Override it with make build VERSION=v1.2.3.
VERSION ?= $(shell git describe --always --dirty 2>/dev/null)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: all build build-regionsched test test-kubernetes bench fuzz pgo lint check-words demo pictures clean slurm-up slurm-down k8s-up k8s-down

all: build test

## build: compile every package, the regionsched command (its version stamped) and regionsched-kubernetes (run --kubernetes) into bin/
build: build-regionsched
	cd kubernetes && $(GO) build ./... && $(GO) build -o ../$(KBIN) ./cmd/regionsched-kubernetes

## build-regionsched: compile every package of the root module and the regionsched command into bin/ (what demo needs: nothing of client-go)
build-regionsched:
	$(GO) build $(PKGS)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/regionsched

## test: vet, then every test with the race detector (what CI runs, with test-kubernetes)
test:
	$(GO) vet $(PKGS)
	$(GO) test -race -count=1 $(PKGS)

## test-kubernetes: vet and test the Kubernetes backend and regionsched-kubernetes, a module of its own that builds client-go (their integration tests run against make k8s-up's control plane, and skip without one)
test-kubernetes:
	cd kubernetes && $(GO) vet ./... && $(GO) test -race -count=1 ./...

## bench: the benchmarks of docs/performance.md, with allocations
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## fuzz: a short run of each fuzz target (scripts/fuzz.sh)
fuzz:
	GO=$(GO) scripts/fuzz.sh $(FUZZTIME)

## pgo: regenerate cmd/regionsched/default.pgo, the profile go build optimizes the command with (scripts/pgo.sh)
pgo:
	GO=$(GO) scripts/pgo.sh

## check-words: the docs and comments tell no history of the work and cite no file the repository lacks
check-words:
	scripts/check-words.sh

## lint: formatting, vet and staticcheck
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)
	cd kubernetes && $(GO) vet ./... && $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

## demo: the FLIP-119 example scheduled region by region, with its timeline picture; the driver flood of several jobs; the cases of examples/scenarios (gangs, a driver queue, notebooks, tenants), each without and with the feature that solves it; the pictures as SVG in out/, and PNG when rsvg-convert is installed
DEMO_PICS := flip119-pointwise flip119-eager-deadlock flood-fifo flood-stateaware gangs-none gangs-hard gangs-soft \
	driver-queue-unchanged driver-queue-raised notebooks-unchanged notebooks-raised tenants-no-guarantees tenants-guaranteed
demo: build-regionsched
	@mkdir -p out
	@echo "== the regions of FLIP-119's example in pointwise-pipelined-only mode"
	./$(BIN) regions --mode pointwise-pipelined-only examples/jobs/flip119.json
	@echo
	@echo "== simulated on 2 slots with the region scheduler (timeline: out/flip119-pointwise.svg)"
	./$(BIN) simulate --mode pointwise-pipelined-only --slots 2 --trace out/flip119-pointwise.jsonl --svg out/flip119-pointwise.svg examples/jobs/flip119.json
	@echo
	@echo "== all-pipelined on 4 slots: is it deadlock-free, and what does a scheduler without regions do?"
	./$(BIN) check --mode all-pipelined --slots 4 examples/jobs/flip119.json
	./$(BIN) simulate --mode all-pipelined --slots 4 --policy region examples/jobs/flip119.json
	@./$(BIN) simulate --mode all-pipelined --slots 4 --policy eager --svg out/flip119-eager-deadlock.svg examples/jobs/flip119.json 2>/dev/null; \
		echo "(exit code $$? from the eager baseline: it deadlocked, as FLIP-119 predicts; timeline: out/flip119-eager-deadlock.svg)"
	@echo
	@echo "== the driver flood: four jobs with drivers on 4 slots, fifo queues (every slot goes to a driver) and stateaware"
	@./$(BIN) simulate --slots 4 --queue-policy fifo --svg out/flood-fifo.svg examples/jobs/flood/spark-*.json; \
		echo "(exit code $$? under fifo: the drivers hold every slot and no job gets its first region; timeline: out/flood-fifo.svg)"
	./$(BIN) simulate --slots 4 --queue-policy stateaware --svg out/flood-stateaware.svg examples/jobs/flood/spark-*.json
	@echo
	@echo "== gangs: three Spark-like jobs on 6 slots, each a driver and 4 executors that must run together (examples/scenarios/gangs)"
	@v=$$(./$(BIN) simulate --slots 6 --svg out/gangs-none.svg examples/scenarios/gangs/none/spark-*.json 2>&1 | tail -n 1 | sed 's/ never finish:.*/ never finish/'); \
		echo "without gangs the drivers take 3 slots and no job gets its 4 executors from the 3 left: $$v (out/gangs-none.svg)"
	@v=$$(./$(BIN) simulate --slots 6 --svg out/gangs-hard.svg examples/scenarios/gangs/hard/spark-*.json | tail -n 1); \
		echo "hard gangs of 5 slots reserve each job's driver and executors at once, one job after another: $$v (out/gangs-hard.svg)"
	@v=$$(./$(BIN) simulate --slots 6 --svg out/gangs-soft.svg examples/scenarios/gangs/soft/spark-*.json | tail -n 1); \
		echo "soft gangs that wait 3 s: spark-2's and spark-3's time out, and the jobs compete without them after a 10 s backoff: $$v (out/gangs-soft.svg)"
	@echo
	@echo "== the driver queue: one slot fits a driver, three drivers wait for it (examples/scenarios/driver-queue)"
	@v=$$(./$(BIN) simulate --cluster examples/scenarios/driver-queue/cluster.json --svg out/driver-queue-unchanged.svg \
		examples/scenarios/driver-queue/nightly.json examples/scenarios/driver-queue/spark-*.json | grep '^job "spark' | sed 's/^job "\([^"]*\)": .*first deploy \([0-9]* ms\).*/\1 at \2/' | sort -n -k3 | paste -sd, | sed 's/,/, /g'); \
		echo "unchanged, the jobs' first tasks start in the order the jobs came: $$v (out/driver-queue-unchanged.svg)"
	@v=$$(./$(BIN) simulate --cluster examples/scenarios/driver-queue/cluster.json --events examples/scenarios/driver-queue/events.jsonl \
		--audit out/driver-queue-audit.jsonl --svg out/driver-queue-raised.svg \
		examples/scenarios/driver-queue/nightly.json examples/scenarios/driver-queue/spark-*.json | grep '^job "spark' | sed 's/^job "\([^"]*\)": .*first deploy \([0-9]* ms\).*/\1 at \2/' | sort -n -k3 | paste -sd, | sed 's/,/, /g'); \
		echo "carol's raise of dave's spark-3 is refused, alice's (an admin) applied, and spark-3's driver jumps the queue: $$v (out/driver-queue-raised.svg, audit: out/driver-queue-audit.jsonl)"
	@echo
	@echo "== notebooks: two interactive jobs share 6 slots in a fairshare queue that preempts at once (examples/scenarios/notebooks)"
	@v=$$(./$(BIN) simulate --cluster examples/scenarios/notebooks/cluster.json --svg out/notebooks-unchanged.svg examples/scenarios/notebooks/notebook-*.json | tail -n 1); \
		echo "equal priorities, 3 slots each: $$v (out/notebooks-unchanged.svg)"
	@v=$$(./$(BIN) simulate --cluster examples/scenarios/notebooks/cluster.json --events examples/scenarios/notebooks/events.jsonl \
		--audit out/notebooks-audit.jsonl --svg out/notebooks-raised.svg examples/scenarios/notebooks/notebook-*.json | tail -n 1); \
		echo "bob doubles his notebook's priority at 4.5 s: the shares go from 3 + 3 to 2 + 4 at once, alice's cancelled tasks run again later: $$v (out/notebooks-raised.svg, audit: out/notebooks-audit.jsonl)"
	@echo
	@echo "== tenants: a small team's burst borrows 8 idle slots, the big team's two jobs come at 2 s (examples/scenarios/tenants)"
	@v=$$(./$(BIN) simulate --cluster examples/scenarios/tenants/cluster-no-guarantees.json --svg out/tenants-no-guarantees.svg \
		examples/scenarios/tenants/small-burst.json examples/scenarios/tenants/big-*.json | grep '^job "big' | sed 's/^job "\([^"]*\)": .*first deploy \([0-9]*\) ms, finished \([0-9]* ms\).*/\1 from \2 to \3/' | paste -sd, | sed 's/,/, /g'); \
		echo "without guarantees the burst keeps every slot until its tasks end, then the big team gets half: $$v (out/tenants-no-guarantees.svg)"
	@v=$$(./$(BIN) simulate --cluster examples/scenarios/tenants/cluster.json --color-by queue --svg out/tenants-guaranteed.svg \
		examples/scenarios/tenants/small-burst.json examples/scenarios/tenants/big-*.json | grep '^job "big' | sed 's/^job "\([^"]*\)": .*first deploy \([0-9]*\) ms, finished \([0-9]* ms\).*/\1 from \2 to \3/' | paste -sd, | sed 's/,/, /g'); \
		echo "guaranteed 2 and 6: the big queue reclaims 6 borrowed slots 1 s after its jobs come, then the teams hold 2 + 6: $$v (out/tenants-guaranteed.svg)"
	@echo
	@echo "== the timeline pictures"
	@if command -v rsvg-convert >/dev/null; then \
		for p in $(DEMO_PICS); do rsvg-convert -o out/$$p.png out/$$p.svg && echo "out/$$p.svg and out/$$p.png"; done; \
		echo "open them in a web browser or an image viewer (e.g. xdg-open out/flip119-pointwise.png)"; \
	else \
		for p in $(DEMO_PICS); do echo "out/$$p.svg"; done; \
		echo "open them in a web browser (e.g. xdg-open out/flip119-pointwise.svg); for PNGs too, install rsvg-convert (Debian: apt-get install librsvg2-bin) and run make demo again"; \
	fi

## pictures: the timelines of the demo's cases as SVG and PNG in docs/ (installs rsvg-convert when missing)
PICS := flip119-pointwise flip119-eager-deadlock flip119-failover wordcount-large cycle-side-input-deadlock flood-fifo flood-stateaware gang preempt stream speculation hybrid-sharing \
	gangs-none gangs-hard gangs-soft driver-queue-unchanged driver-queue-raised notebooks-unchanged notebooks-raised \
	tenants-no-guarantees tenants-guaranteed
pictures: build-regionsched
	@command -v rsvg-convert >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq librsvg2-bin; \
		else sudo apt-get update -qq && sudo apt-get install -y -qq librsvg2-bin; fi; }
	@mkdir -p out
	@# a word count at parallelism 1,000-2,000 (the shape of the original examples/jobs/wordcount.json)
	printf '%s\n' '{"name": "wordcount-large", "vertices": [' \
		'{"id": "text-source", "parallelism": 1000, "durationMs": 2000}, {"id": "tokenizer", "parallelism": 2000, "durationMs": 1500},' \
		'{"id": "counter", "parallelism": 2000, "durationMs": 2500}, {"id": "result-sink", "parallelism": 2000, "durationMs": 500}],' \
		'"edges": [{"source": "text-source", "target": "tokenizer", "shipStrategy": "rebalance"},' \
		'{"source": "tokenizer", "target": "counter", "shipStrategy": "hash"}, {"source": "counter", "target": "result-sink", "shipStrategy": "forward"}]}' \
		> out/wordcount-large.json
	./$(BIN) simulate --mode pointwise-pipelined-only --slots 2 --svg docs/flip119-pointwise.svg examples/jobs/flip119.json
	-./$(BIN) simulate --mode all-pipelined --slots 4 --policy eager --svg docs/flip119-eager-deadlock.svg examples/jobs/flip119.json
	./$(BIN) simulate --mode pointwise-pipelined-only --slots 2 --fail 'B#1@500' --svg docs/flip119-failover.svg examples/jobs/flip119.json
	./$(BIN) simulate --slots 400 --svg docs/wordcount-large.svg out/wordcount-large.json
	-./$(BIN) simulate --mode all-pipelined --slots 8 --policy eager --svg docs/cycle-side-input-deadlock.svg examples/jobs/cycle-side-input.json
	-./$(BIN) simulate --slots 4 --queue-policy fifo --svg docs/flood-fifo.svg examples/jobs/flood/spark-*.json
	./$(BIN) simulate --slots 4 --queue-policy stateaware --svg docs/flood-stateaware.svg examples/jobs/flood/spark-*.json
	./$(BIN) simulate --slots 6 --svg docs/gang.svg examples/jobs/gang/train.json examples/jobs/gang/etl.json
	./$(BIN) simulate --cluster examples/jobs/preempt/cluster.json --events examples/jobs/preempt/events.jsonl \
		--svg docs/preempt.svg examples/jobs/preempt/low.json examples/jobs/preempt/high.json examples/jobs/preempt/urgent.json
	@# a stream: one unbounded source feeding a bounded map, next to a bounded job
	printf '%s\n' '{"name": "clicks", "vertices": [{"id": "source", "parallelism": 2, "bounded": false}, {"id": "enrich", "parallelism": 2, "bounded": false}],' \
		'"edges": [{"source": "source", "target": "enrich", "shipStrategy": "forward", "exchange": "pipelined"}]}' > out/stream-clicks.json
	./$(BIN) simulate --slots 4 --svg docs/stream.svg out/stream-clicks.json examples/jobs/flip119.json
	@# speculative execution: 15% of attempts 10x slow, the detector's lower bound 0 for tasks of seconds
	./$(BIN) simulate --slots 6 --stragglers 0.15 --speculation --speculation-baseline-lower-bound 0 --seed 5 --svg docs/speculation.svg examples/jobs/wordcount.json
	@# hybrid exchanges: the joins go into the slots of the scans they read live
	./$(BIN) simulate --mode all-hybrid-full --slots 8 --svg docs/hybrid-sharing.svg examples/jobs/tpcds-q3.json
	@# the cases of examples/scenarios, each with and without the feature that solves it
	-./$(BIN) simulate --slots 6 --svg docs/gangs-none.svg examples/scenarios/gangs/none/spark-*.json
	./$(BIN) simulate --slots 6 --svg docs/gangs-hard.svg examples/scenarios/gangs/hard/spark-*.json
	./$(BIN) simulate --slots 6 --svg docs/gangs-soft.svg examples/scenarios/gangs/soft/spark-*.json
	./$(BIN) simulate --cluster examples/scenarios/driver-queue/cluster.json --svg docs/driver-queue-unchanged.svg \
		examples/scenarios/driver-queue/nightly.json examples/scenarios/driver-queue/spark-*.json
	./$(BIN) simulate --cluster examples/scenarios/driver-queue/cluster.json --events examples/scenarios/driver-queue/events.jsonl \
		--svg docs/driver-queue-raised.svg examples/scenarios/driver-queue/nightly.json examples/scenarios/driver-queue/spark-*.json
	./$(BIN) simulate --cluster examples/scenarios/notebooks/cluster.json --svg docs/notebooks-unchanged.svg examples/scenarios/notebooks/notebook-*.json
	./$(BIN) simulate --cluster examples/scenarios/notebooks/cluster.json --events examples/scenarios/notebooks/events.jsonl \
		--svg docs/notebooks-raised.svg examples/scenarios/notebooks/notebook-*.json
	./$(BIN) simulate --cluster examples/scenarios/tenants/cluster-no-guarantees.json --svg docs/tenants-no-guarantees.svg \
		examples/scenarios/tenants/small-burst.json examples/scenarios/tenants/big-*.json
	./$(BIN) simulate --cluster examples/scenarios/tenants/cluster.json --color-by queue --svg docs/tenants-guaranteed.svg \
		examples/scenarios/tenants/small-burst.json examples/scenarios/tenants/big-*.json
	@# the package map, drawn from the imports
	$(GO) test ./internal/archtest -run TestPackageDiagram -update
	@for p in $(PICS) packages; do rsvg-convert -o docs/$$p.png docs/$$p.svg && echo "docs/$$p.png"; done

## slurm-up: a private Slurm test cluster (5 virtual nodes) under /tmp/regionsched-slurm; installs the Debian packages when missing
slurm-up:
	scripts/slurm-up.sh

## slurm-down: stop the processes slurm-up started
slurm-down:
	scripts/slurm-down.sh

## k8s-up: a private Kubernetes control plane (etcd, kube-apiserver, KWOK) under /tmp/regionsched-k8s; builds the programs the first time (minutes), then starts in seconds
k8s-up:
	scripts/k8s-up.sh

## k8s-down: stop the processes k8s-up started
k8s-down:
	scripts/k8s-down.sh

clean:
	rm -rf bin out
