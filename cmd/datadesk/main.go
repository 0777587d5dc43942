// Command datadesk serves owner-scoped files and tables, and manages users
// and ingests from the command line.
//
//	datadesk serve [--addr 127.0.0.1:8080] [--data ./data]
//	datadesk mcp [--token TOKEN] [--data ./data]
//	datadesk user add NAME [--role ROLE] [--data DIR]
//	datadesk ingest [--memory] FILE
//	datadesk proxy config --nodes n1=HOST:PORT,n2=HOST:PORT
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"datadesk/internal/procmem"
	"datadesk/toolcall"

	"datadesk"
	"datadesk/answers"
	"datadesk/api"
	"datadesk/backup"
	"datadesk/cluster"
	"datadesk/engine"
	"datadesk/engine/catalog"
	"datadesk/ingest"
	"datadesk/rbac"
	"datadesk/serverdb"
)

const usage = `datadesk: owner-scoped files and tables on DuckDB

usage:
  datadesk serve [--addr 127.0.0.1:8080] [--data ./data] [flags]
                 [--nodes n1=HOST:PORT,n2=HOST:PORT --node n1 --shared DIR]
  datadesk proxy config --nodes n1=HOST:PORT,... [--bind 127.0.0.1:8080] [--stats 127.0.0.1:8404]  (prints a HAProxy config)
  datadesk proxy rules  (prints Prometheus's alerting rules for the nodes and the proxy)
  datadesk nodes plan --nodes n1=HOST:PORT,... --to n1=...,n3=... [--shared DIR]  (which owners a new member list moves)
  datadesk nodes apply --nodes n1=HOST:PORT,... --to n1=...,n3=... [--shared DIR] [--drain 30s]  (move them, nodes running)
  datadesk owner where NAME|ID --nodes n1=HOST:PORT,... [--shared DIR]  (prints the node that holds an owner)
  datadesk mcp [--token TOKEN] [--data ./data]  (MCP over stdio; token default $DATADESK_TOKEN)
  datadesk user add NAME [--role viewer|analyst|admin] [--data ./data]
  datadesk user list [--data ./data]
  datadesk user passwd NAME [--data ./data]     (reads the password from stdin)
  datadesk user role NAME ROLE | token NAME | revoke NAME | remove NAME [--data ./data]
  datadesk policy check USER TOOL [ARGS-JSON] [--data ./data]
  datadesk audit [--user NAME] [--limit N] [--data ./data]
  datadesk backup DIR [--data ./data] [--shared DIR]  (a consistent copy, made by the running server or here)
  datadesk backup verify DIR                          (the newest backup in DIR, or DIR itself: complete, every checksum as made)
  datadesk restore FROM --data DIR [--shared DIR]    (FROM: a backup, or a folder of them: the newest complete)
  datadesk ingest [--memory] [--header-row N [--sheet NAME]] FILE
  datadesk table move ID --to clickhouse|duckdb [--clickhouse URL,URL] [--data ./data]  (asks a server running on --data, or opens it)

benchmarks: datadesk-bench (go run ./cmd/datadesk-bench), beside this binary
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		var e *datadesk.Error
		if errors.As(err, &e) {
			fmt.Fprintln(os.Stderr, "datadesk:", e.Message)
		} else {
			fmt.Fprintln(os.Stderr, "datadesk:", err)
		}
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	privateFiles()
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command")
	}
	switch args[0] {
	case "mcp":
		return serveMCP(args[1:], os.Stdin, stdout, stderr)
	case "serve":
		return serve(args[1:], stdout, stderr)
	case "user":
		if len(args) < 2 {
			return errors.New("user: want add or list")
		}
		switch args[1] {
		case "add":
			return userAdd(args[2:], stdout)
		case "list":
			return userList(args[2:], stdout)
		case "passwd":
			return userPasswd(args[2:], os.Stdin, stdout)
		case "role", "token", "revoke", "remove":
			return userChange(args[1], args[2:], stdout)
		}
		return fmt.Errorf("user: unknown command %q", args[1])
	case "policy":
		if len(args) < 2 || args[1] != "check" {
			return errors.New("policy: want check USER TOOL [ARGS-JSON]")
		}
		return policyCheck(args[2:], stdout)
	case "audit":
		return auditRead(args[1:], stdout)
	case "ingest":
		return ingestFile(args[1:], stdout)
	case "table":
		if len(args) < 2 || args[1] != "move" {
			return errors.New("table: want move ID --to clickhouse|duckdb")
		}
		return tableMove(args[2:], stdout)
	case "bench":
		return errors.New("the benchmarks are their own command: datadesk-bench (go run ./cmd/datadesk-bench --datadesk bin/datadesk), same flags")
	case "backup":
		return backupCommand(args[1:], stdout)
	case "restore":
		return restoreCommand(args[1:], stdout)
	case "nodes":
		switch {
		case len(args) >= 2 && args[1] == "plan":
			return nodesPlan(args[2:], stdout)
		case len(args) >= 2 && args[1] == "apply":
			return nodesApply(args[2:], stdout)
		}
		return errors.New("nodes: want plan or apply --nodes n1=HOST:PORT,... --to n1=HOST:PORT,...")
	case "owner":
		if len(args) < 2 || args[1] != "where" {
			return errors.New("owner: want where NAME|ID --nodes n1=HOST:PORT,...")
		}
		return ownerWhere(args[2:], stdout)
	case "proxy":
		if len(args) == 2 && args[1] == "rules" {
			_, err := io.WriteString(stdout, cluster.AlertRules)
			return err
		}
		if len(args) < 2 || args[1] != "config" {
			return errors.New("proxy: want config --nodes n1=HOST:PORT,... or rules")
		}
		return proxyConfig(args[2:], stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// engineFlags are the settings every command that opens databases takes.
type engineFlags struct {
	data        *string
	memoryLimit *string
	threads     *int
	maxTemp     *string
	maxOpen     *int
	maxOwner    *int64
	answerCache *string
}

func addEngineFlags(fs *flag.FlagSet) engineFlags {
	return engineFlags{
		data:        fs.String("data", envOr("DATADESK_DATA", "./data"), "data directory"),
		memoryLimit: fs.String("memory-limit", engine.DefaultMemoryLimit, "memory of the whole node's queries and loads, all owners together (DuckDB's buffer pool)"),
		threads:     fs.Int("threads", engine.DefaultThreads, "threads of the whole node's DuckDB work, all owners together"),
		maxTemp:     fs.String("max-temp", engine.DefaultMaxTempSize, "temp space the whole node may spill to, under DATA/tmp"),
		maxOpen:     fs.Int("max-open", engine.DefaultMaxOpen, "owner databases kept open while idle; more stay open while in use"),
		maxOwner:    fs.Int64("max-owner-storage", engine.DefaultMaxOwnerBytes, "bytes one owner may keep: its files, each counted whole, and its database"),
		answerCache: fs.String("answer-cache", "auto", "memory kept for read-only tool calls' answers, taken from --memory-limit: auto (a sixteenth of it), a size such as 64MB, or off"),
	}
}

func (f engineFlags) config(logger *slog.Logger) engine.Config {
	return engine.Config{Dir: *f.data, MemoryLimit: *f.memoryLimit, Threads: *f.threads, MaxTempSize: *f.maxTemp, MaxOpen: *f.maxOpen,
		MaxOwnerBytes: *f.maxOwner, Logger: logger}
}

// addLogFlag adds --log-level (DATADESK_LOG_LEVEL) to a command.
func addLogFlag(fs *flag.FlagSet) *string {
	return fs.String("log-level", envOr("DATADESK_LOG_LEVEL", "info"), "log level: debug (the SQL of each query with its values), info, warn or error")
}

// newLogger is the JSON logger of a command at level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func serve(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	addr := fs.String("addr", envOr("DATADESK_ADDR", "127.0.0.1:8080"), "listen address")
	maxUpload := fs.Int64("max-upload", api.DefaultMaxUpload, "largest upload in bytes")
	queryTimeout := fs.Duration("query-timeout", api.DefaultQueryTimeout, "longest a files.query_table call may run")
	approvalTTL := fs.Duration("approval-ttl", api.DefaultApprovalTTL, "how long a call waits for approval")
	offload := fs.String("offload-providers", envOr("DATADESK_OFFLOAD_PROVIDERS", ""), "comma-separated tool providers whose big table results are stored, not passed to the model")
	minFree := fs.Uint64("ready-min-free", api.DefaultReadyMinFree, "free bytes the data and shared directories need for /readyz to answer ready")
	trusted := fs.String("trusted-proxies", envOr("DATADESK_TRUSTED_PROXIES", ""), "addresses or CIDR ranges of reverse proxies whose X-Forwarded-For names the client (empty: the header is ignored)")
	ef := addEngineFlags(fs)
	cf := addClusterFlags(fs)
	nf := addNodeFlags(fs)
	logLevel := addLogFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	logger, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	engineCfg, err := cf.apply(ef.config(logger))
	if err != nil {
		return err
	}
	proxies, err := api.ParseTrustedProxies(*trusted)
	if err != nil {
		return err
	}
	apiCfg := api.Config{MaxUpload: *maxUpload, QueryTimeout: *queryTimeout, ApprovalTTL: *approvalTTL,
		OffloadProviders: splitList(*offload), TrustedProxies: proxies, ReadyMinFree: *minFree, Logger: logger}
	if err := nf.apply(&apiCfg, *ef.data); err != nil {
		return err
	}
	if err := tighten(*ef.data, nf.sharedDir(*ef.data)); err != nil {
		return err
	}

	users, err := rbac.OpenUsers(nf.sharedDir(*ef.data))
	if err != nil {
		return err
	}
	if empty, err := users.Empty(); err != nil {
		return err
	} else if empty {
		_, token, err := users.Add("admin", "admin")
		switch {
		case datadesk.ErrorCode(err) == datadesk.Conflict:
			// Another node sharing the users made it first.
		case err != nil:
			return err
		default:
			fmt.Fprintf(stdout, "created user admin; its bearer token (shown only now):\n%s\n", token)
		}
	}
	srv, closeAll, err := openServer(ef, nf.sharedDir(*ef.data), engineCfg, apiCfg)
	if err != nil {
		return err
	}
	defer closeAll()
	hs := srv.HTTPServer(*addr)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	src := backup.Sources{Data: *ef.data, Shared: nf.sharedDir(*ef.data), Engine: srv.Engine(), System: srv.System()}
	if err := serveControl(ctx, src, logger, srv.RecordOperation); err != nil {
		return err
	}
	// Listening before saying so: a client told the server serves can
	// connect at once.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logger.Info("serving", "addr", *addr, "data", *ef.data, "node", *nf.self)
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
		logger.Info("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil {
			return err
		}
	}
	return nil
}

// openServer opens what a server needs: databases and audit log in the
// data directory; users, policy and signing key in the shared directory
// (the data directory itself for a node alone). closeAll closes them.
func openServer(ef engineFlags, shared string, engineCfg engine.Config, cfg api.Config) (_ *api.Server, _ func(), err error) {
	var closers []func() error
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			_ = closers[i]()
		}
	}
	// The results are zero on every failure; what was opened is closed
	// through the local, never the result.
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	users, err := rbac.OpenUsers(shared)
	if err != nil {
		return nil, nil, err
	}
	policyDir := filepath.Join(shared, "policy")
	if err := rbac.WriteDefaults(policyDir); err != nil {
		return nil, nil, err
	}
	policy, err := rbac.OpenPolicy(policyDir, cfg.Logger)
	if err != nil {
		return nil, nil, err
	}
	limit, err := engine.ParseSize("--memory-limit", engineCfg.MemoryLimit)
	if err != nil {
		return nil, nil, err
	}
	answerBytes, err := answerCacheBytes(*ef.answerCache, limit)
	if err != nil {
		return nil, nil, err
	}
	engineCfg.HeldBeside = answerBytes
	eng, err := engine.New(engineCfg)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, eng.Close)
	system, err := serverdb.Open(context.Background(), eng.Dir())
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, system.Close)
	audit, err := rbac.OpenAudit(*ef.data)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, audit.Close)
	// Uploads' readers hold an eighth of the node's memory at most, all
	// of them together: DuckDB's pool has most of the rest.
	in := ingest.New(ingest.Config{MaxReadMemory: limit / 8})
	cfg.SharedDir = shared
	if cfg.SigningKey, err = signingKey(shared); err != nil {
		return nil, nil, err
	}
	cfg.DataDir = *ef.data
	srv, err := api.New(cfg, api.Deps{Engine: eng, System: system, Ingest: in, Users: users, Policy: policy, Audit: audit,
		Answers: answers.New(answerBytes)})
	if err != nil {
		return nil, nil, err
	}
	return srv, closeAll, nil
}

// answerShare is the part of --memory-limit the answers' cache takes
// when --answer-cache is auto: big enough for thousands of typical
// answers, small beside DuckDB's pool.
const answerShare = 16

// answerCacheBytes reads --answer-cache against the node's memory limit:
// auto, off (or 0) or a size, which must leave DuckDB most of the limit.
func answerCacheBytes(flag string, limit int64) (int64, error) {
	switch strings.ToLower(strings.TrimSpace(flag)) {
	case "auto", "":
		return limit / answerShare, nil
	case "off", "0", "none":
		return 0, nil
	}
	n, err := engine.ParseSize("--answer-cache", flag)
	if err != nil {
		return 0, err
	}
	if n > limit/4 {
		return 0, fmt.Errorf("--answer-cache %s is more than a quarter of --memory-limit (%d bytes): DuckDB needs the rest", flag, limit)
	}
	return n, nil
}

// serveMCP serves the Model Context Protocol over stdin and stdout for the
// user whose token is given, on the data directory itself: DuckDB lets one
// process open a database, so it is for a data directory no `datadesk
// serve` has open (a running server offers MCP at /mcp instead). Logs go
// to stderr, since stdout carries the protocol.
func serveMCP(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	token := fs.String("token", "", "bearer token of the user the tools act for (default $DATADESK_TOKEN)")
	queryTimeout := fs.Duration("query-timeout", api.DefaultQueryTimeout, "longest a files.query_table call may run")
	approvalTTL := fs.Duration("approval-ttl", api.DefaultApprovalTTL, "how long a call waits for approval")
	ef := addEngineFlags(fs)
	cf := addClusterFlags(fs)
	logLevel := addLogFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	tok := *token
	if tok == "" {
		tok = os.Getenv("DATADESK_TOKEN")
	}
	if tok == "" {
		return errors.New("mcp needs a user's bearer token: --token or DATADESK_TOKEN")
	}
	logger, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	engineCfg, err := cf.apply(ef.config(logger))
	if err != nil {
		return err
	}
	srv, closeAll, err := openServer(ef, *ef.data, engineCfg, api.Config{QueryTimeout: *queryTimeout, ApprovalTTL: *approvalTTL, Logger: logger})
	if err != nil {
		return err
	}
	defer closeAll()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.ServeMCP(ctx, tok, io.NopCloser(stdin), nopWriteCloser{stdout})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// signingKey returns the key that signs download links, creating it on the
// first start so that links survive restarts.
func signingKey(dir string) ([]byte, error) {
	p := filepath.Join(dir, "signing.key")
	key, err := os.ReadFile(p)
	if err == nil && len(key) >= 32 {
		return key, nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := os.WriteFile(p, key, 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

func userAdd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("user add", flag.ContinueOnError)
	role := fs.String("role", "analyst", "role: viewer, analyst or admin")
	data := fs.String("data", envOr("DATADESK_DATA", "./data"), "data directory")
	name, rest := "", args
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
	}
	if name == "" {
		return errors.New("user add: a NAME is needed")
	}
	users, err := rbac.OpenUsers(*data)
	if err != nil {
		return err
	}
	u, token, err := users.Add(name, *role)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created user %s (%s, role %s); its bearer token:\n%s\n", u.Name, u.ID, u.Role, token)
	return nil
}

// splitArgs separates positional arguments from flags, so that flags may
// come after them.
func splitArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return pos, nil
}

func userPasswd(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("user passwd", flag.ContinueOnError)
	data := fs.String("data", envOr("DATADESK_DATA", "./data"), "data directory")
	pos, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("user passwd: give one NAME; the password comes on stdin")
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("user passwd: no password on stdin")
	}
	users, err := rbac.OpenUsers(*data)
	if err != nil {
		return err
	}
	if err := users.SetPassword(pos[0], strings.TrimRight(line, "\r\n")); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "password set for %s\n", pos[0])
	return nil
}

// userChange runs `user role NAME ROLE`, `user token NAME`, `user revoke
// NAME` and `user remove NAME`.
func userChange(verb string, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("user "+verb, flag.ContinueOnError)
	data := fs.String("data", envOr("DATADESK_DATA", "./data"), "data directory (the shared directory of a cluster)")
	pos, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	want := 1
	if verb == "role" {
		want = 2
	}
	if len(pos) != want {
		return fmt.Errorf("user %s: want %s", verb, map[string]string{"role": "NAME ROLE", "token": "NAME", "revoke": "NAME", "remove": "NAME"}[verb])
	}
	users, err := rbac.OpenUsers(*data)
	if err != nil {
		return err
	}
	name := pos[0]
	switch verb {
	case "role":
		err = users.SetRole(name, pos[1])
		if err == nil {
			fmt.Fprintf(stdout, "%s has role %s from their next request\n", name, pos[1])
		}
	case "token":
		var token string
		if token, err = users.AddToken(name); err == nil {
			fmt.Fprintf(stdout, "a new bearer token of %s:\n%s\n", name, token)
		}
	case "revoke":
		if err = users.RevokeTokens(name); err == nil {
			fmt.Fprintf(stdout, "every token of %s is revoked, and the download links made so far stop working\n", name)
		}
	case "remove":
		if err = users.Remove(name); err == nil {
			fmt.Fprintf(stdout, "%s is removed: tokens, sessions and links stop working\n", name)
		}
	}
	return err
}

// policyCheck prints the decision and its reason for a user calling a tool
// (or an HTTP action such as files.upload) with arguments.
func policyCheck(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("policy check", flag.ContinueOnError)
	ef := addEngineFlags(fs)
	data := ef.data
	pos, err := splitArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 || len(pos) > 3 {
		return errors.New("policy check: want USER TOOL [ARGS-JSON]")
	}
	users, err := rbac.OpenUsers(*data)
	if err != nil {
		return err
	}
	user, err := users.ByName(pos[0])
	if err != nil {
		return err
	}
	var callArgs map[string]any
	if len(pos) == 3 {
		dec := json.NewDecoder(strings.NewReader(pos[2]))
		dec.UseNumber()
		if err := dec.Decode(&callArgs); err != nil {
			return fmt.Errorf("policy check: ARGS-JSON: %w", err)
		}
	}
	dir := filepath.Join(*data, "policy")
	if err := rbac.WriteDefaults(dir); err != nil {
		return err
	}
	policy, err := rbac.OpenPolicy(dir, nil)
	if err != nil {
		return err
	}
	// The decision reads the work, as a real call does: a copy's source
	// table, a ZIP's members. That needs the user's database, which only
	// one process may hold: stop the server first for such calls.
	eng, err := engine.New(ef.config(nil))
	if err != nil {
		return err
	}
	defer eng.Close()
	d, err := toolcall.Check(context.Background(), policy, eng, user, pos[1], callArgs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s\n%s\n", d.Effect, d.Reason)
	return nil
}

// auditRead prints the newest audit entries as JSON lines.
func auditRead(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	data := fs.String("data", envOr("DATADESK_DATA", "./data"), "data directory")
	user := fs.String("user", "", "only entries of this user (name or id)")
	limit := fs.Int("limit", 50, "how many entries")
	if err := fs.Parse(args); err != nil {
		return err
	}
	entries, err := rbac.ReadAudit(*data, *user, *limit)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return err
		}
	}
	return nil
}

func userList(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("user list", flag.ContinueOnError)
	data := fs.String("data", envOr("DATADESK_DATA", "./data"), "data directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	users, err := rbac.OpenUsers(*data)
	if err != nil {
		return err
	}
	list, err := users.List()
	if err != nil {
		return err
	}
	for _, u := range list {
		fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", u.ID, u.Name, u.Role, u.CreatedAt.Format(time.RFC3339))
	}
	return nil
}

// ingestFile reads a file the way an upload does, into a throw-away data
// directory, and prints the import report as JSON.
func ingestFile(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	memory := fs.Bool("memory", false, "also report this process's peak resident memory, in MiB (Linux)")
	headerRow := fs.Int("header-row", 0, "the row (of a sheet, or the record of a CSV file), from 1, that holds the header (default: found in the file)")
	headerRows := fs.String("header-rows", "", "the rows the header is made of, as 4-6 or 4,5,6 (instead of --header-row)")
	skipRows := fs.String("skip-rows", "", "rows to keep out of the tables, as 1,2,7-9")
	sheet := fs.String("sheet", "", "with --header-row, --header-rows or --skip-rows: the one sheet they apply to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("ingest: give one FILE")
	}
	one := ""
	if *headerRow != 0 {
		one = strconv.Itoa(*headerRow)
	}
	opts, err := ingest.ParseOptions(func(name string) string {
		return map[string]string{"header_row": one, "header_rows": *headerRows, "skip_rows": *skipRows, "sheet": *sheet}[name]
	})
	if err != nil {
		return err
	}
	path := fs.Arg(0)
	dir, err := os.MkdirTemp("", "datadesk-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	eng, err := engine.New(engine.Config{Dir: dir})
	if err != nil {
		return err
	}
	defer eng.Close()
	ctx := context.Background()
	store, release, err := eng.Acquire(ctx, datadesk.NewID("u"))
	if err != nil {
		return err
	}
	defer release()
	tmp := filepath.Join(store.IncomingDir(), "upload")
	if err := engine.CopyFile(path, tmp); err != nil {
		return err
	}
	in := ingest.New(ingest.Config{})
	res, err := in.ReadWith(ctx, tmp, filepath.Base(path), store.IncomingDir(), opts)
	if err != nil {
		return err
	}
	defer res.Close()
	f, err := store.AddFile(ctx, engine.NewFile{Filename: filepath.Base(path), ContentType: res.ContentType, TempPath: tmp, Tables: res.Tables})
	if err != nil {
		return err
	}
	reports := make([]catalog.Report, 0, len(f.Tables))
	for _, t := range f.Tables {
		reports = append(reports, t.Report)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	out := map[string]any{"file": f.Filename, "format": res.Format, "content_type": res.ContentType, "tables": reports}
	if *memory {
		out["peak_memory_mib"] = procmem.PeakMiB("self")
	}
	return enc.Encode(out)
}
