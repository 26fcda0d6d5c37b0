package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/weavesql/weave/scheduler"
	"sigs.k8s.io/yaml"
)

// Config is weave-scheduler's configuration, in the spirit of KubeSchedulerConfiguration. It is read from a
// YAML or JSON file (--config) and flags set on the command line override it.
type Config struct {
	// Kubeconfig is the path of a kubeconfig file; empty means in-cluster configuration.
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// SchedulerName is the spec.schedulerName of the pods this scheduler places.
	SchedulerName string `json:"schedulerName,omitempty"`
	// BatchSize is the most pods per solve. BatchWait is how long a batch may wait for more pods
	// (scheduler.Config.BatchIdle); 0, the default, does not wait: the loop takes what is pending as soon
	// as it is free, and the pods that arrive during a solve form the next batch.
	BatchSize int           `json:"batchSize,omitempty"`
	BatchWait time.Duration `json:"batchWait,omitempty"`
	// BurstLinger is how long a batch may wait for the rest of a burst when BatchWait does not wait
	// (scheduler.Config.BurstLinger): only while pods arrive more than 200 per second; 0 is the
	// scheduler's default (200ms), negative turns it off.
	BurstLinger time.Duration `json:"burstLinger,omitempty"`
	// Speculate decides ahead, while no pod is pending, the batch of the pod expected next (like the last to
	// arrive, or like the pod that followed such a pod last time), and places such a pod from it when it arrives alone on an unchanged state (scheduler.Config.Speculate):
	// a trickle of a Deployment's replicas waits for a check instead of a solve. On by default.
	Speculate bool `json:"speculate"`
	// SolverTimeout bounds each solve.
	SolverTimeout time.Duration `json:"solverTimeout,omitempty"`
	// SolverImprovementTimeout ends a solve once the placement has not
	// improved for that long (scheduler.Config.ImprovementTimeout); 0 is
	// the scheduler's default, negative waits for SolverTimeout.
	SolverImprovementTimeout time.Duration `json:"solverImprovementTimeout,omitempty"`
	// SolverUnplacedImprovementTimeout is SolverImprovementTimeout while
	// the placement leaves a pod without a node that the solver has not
	// ruled out (scheduler.Config.UnplacedImprovementTimeout); 0: 100ms,
	// negative: off.
	SolverUnplacedImprovementTimeout time.Duration `json:"solverUnplacedImprovementTimeout,omitempty"`
	// SolverGapLimit ends a placement solve once it is proven within that
	// many objective units of the best placement
	// (scheduler.Config.GapLimit); 0: 50, negative: off.
	SolverGapLimit int64 `json:"solverGapLimit,omitempty"`
	// PreemptionImprovementTimeout is the same for preemption plans
	// (scheduler.Config.PreemptionImprovementTimeout; 0: 50ms).
	PreemptionImprovementTimeout time.Duration `json:"preemptionImprovementTimeout,omitempty"`
	// PreemptionUnplacedImprovementTimeout is PreemptionImprovementTimeout while a plan leaves a preemptor
	// without a node that the solver has not ruled out
	// (scheduler.Config.PreemptionUnplacedImprovementTimeout; 0: 500ms, negative: off).
	PreemptionUnplacedImprovementTimeout time.Duration `json:"preemptionUnplacedImprovementTimeout,omitempty"`
	// NodeSample is the most nodes a placement batch considers on a larger
	// cluster (scheduler.Config.NodeSample; 0: kube-scheduler's adaptive
	// share, scheduler.DefaultNodeSample, at most 100 nodes per pod of a batch; negative: every node).
	NodeSample int `json:"nodeSample,omitempty"`
	// GangReserveAfter is the PodGroup fairness bound (scheduler.Config.GangReserveAfter): a PodGroup
	// ready for longer than this without being admitted holds back the pods and groups of its priority or
	// lower that arrived after it. 0 (the default) turns the rule off.
	GangReserveAfter time.Duration `json:"gangReserveAfter,omitempty"`
	// BindWorkers is how many bindings run in parallel (64): a Binding
	// request is a round trip to the API server, and kube-scheduler binds
	// every pod in its own goroutine.
	BindWorkers int `json:"bindWorkers,omitempty"`
	// InitialBackoff and MaxBackoff bound the retry delay of pods that could not be placed.
	InitialBackoff time.Duration `json:"initialBackoff,omitempty"`
	MaxBackoff     time.Duration `json:"maxBackoff,omitempty"`
	// LeaderElection through a coordination.k8s.io Lease.
	LeaderElect    bool          `json:"leaderElect"`
	LeaseNamespace string        `json:"leaseNamespace,omitempty"`
	LeaseName      string        `json:"leaseName,omitempty"`
	Identity       string        `json:"identity,omitempty"`
	LeaseDuration  time.Duration `json:"leaseDuration,omitempty"`
	RenewDeadline  time.Duration `json:"renewDeadline,omitempty"`
	RetryPeriod    time.Duration `json:"retryPeriod,omitempty"`
	// Serving is the HTTPS server of /healthz, /readyz, /livez and /metrics (serving.go): kube-scheduler's
	// options and flags (--secure-port, --bind-address, --tls-cert-file, --authentication-kubeconfig, ...), not
	// read from the file; nil serves nothing.
	Serving *ServingOptions `json:"-"`
	// QPS and Burst of the API client.
	QPS   float32 `json:"qps,omitempty"`
	Burst int     `json:"burst,omitempty"`
	// LogFormat is text or json; LogLevel debug, info, warn or error.
	LogFormat string `json:"logFormat,omitempty"`
	LogLevel  string `json:"logLevel,omitempty"`
	// Verify makes Weave re-check every solution in the database (slower; for testing).
	Verify bool `json:"verify,omitempty"`
	// StateDB is a PostgreSQL URL (postgres://user@host:5432/db?sslmode=require) for the scheduler's state;
	// empty keeps it in an embedded in-memory SQLite database. Each replica claims a schema of its own there,
	// the first free one of StateSchema_0 ... StateSchema_15, which it empties at start and fills from its
	// informers.
	StateDB string `json:"stateDB,omitempty"`
	// StateSchema is the name prefix of the replicas' schemas in StateDB.
	StateSchema string `json:"stateSchema,omitempty"`
	// DisablePreemption turns preemption off: a pod that fits no node is only reported and backed off.
	DisablePreemption bool `json:"disablePreemption,omitempty"`
	// NominationTimeout is how long a preemptor waits for its evicted victims to be gone before it goes back
	// to the queue.
	NominationTimeout time.Duration `json:"nominationTimeout,omitempty"`
	// DisabledPolicies lists policy IDs of package scheduler (docs/scheduler.md, Policies) left out of both
	// models, as a kube-scheduler profile disables plugins. H8, P1 and P2 cannot be disabled.
	DisabledPolicies []string `json:"disabledPolicies,omitempty"`
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		SchedulerName:  "weave-scheduler",
		BatchSize:      100,
		SolverTimeout:  2 * time.Second,
		BindWorkers:    64,
		InitialBackoff: time.Second,
		MaxBackoff:     10 * time.Second,
		LeaderElect:    true,
		Speculate:      true,
		LeaseNamespace: "kube-system",
		LeaseName:      "weave-scheduler",
		Identity:       host + "_" + fmt.Sprint(os.Getpid()),
		LeaseDuration:  15 * time.Second,
		RenewDeadline:  10 * time.Second,
		RetryPeriod:    2 * time.Second,
		Serving:        NewServingOptions(),
		QPS:            200,
		Burst:          400,
		LogFormat:      "json",
		LogLevel:       "info",
		StateSchema:    "weave_scheduler",

		NominationTimeout: 2 * time.Minute,
	}
}

// ParseFlags reads a configuration from args: defaults, then --config FILE, then the flags given.
func ParseFlags(args []string) (Config, error) {
	cfg := DefaultConfig()
	fs := flag.NewFlagSet("weave-scheduler", flag.ContinueOnError)
	file := fs.String("config", "", "configuration file (YAML or JSON, the fields of app.Config); flags override it")
	var c Config
	fs.StringVar(&c.Kubeconfig, "kubeconfig", cfg.Kubeconfig, "kubeconfig file (empty: in-cluster)")
	fs.StringVar(&c.SchedulerName, "scheduler-name", cfg.SchedulerName, "schedule pods whose spec.schedulerName is this")
	fs.IntVar(&c.BatchSize, "batch-size", cfg.BatchSize, "most pods per batch")
	fs.DurationVar(&c.BatchWait, "batch-wait", cfg.BatchWait, "wait up to this long for more pods before solving a batch smaller than --batch-size (0: no wait, the batch is what is pending)")
	fs.DurationVar(&c.BurstLinger, "burst-linger", cfg.BurstLinger, "while pods arrive in a burst (over 125/s), wait up to this long for the rest of it before solving (0: 200ms; negative: off)")
	fs.BoolVar(&c.Speculate, "speculate", cfg.Speculate, "while no pod is pending, decide ahead the batch of the pods expected next (like the last to arrive, or like the one that followed such a pod, and so on: 1 to 16 of them), and place such pods from it as they arrive if nothing else changed")
	fs.DurationVar(&c.SolverTimeout, "solver-timeout", cfg.SolverTimeout, "time limit of each solve")
	fs.DurationVar(&c.SolverImprovementTimeout, "solver-improvement-timeout", cfg.SolverImprovementTimeout, "end a solve once the placement has not improved for this long (0: 5ms; negative: run to --solver-timeout)")
	fs.DurationVar(&c.SolverUnplacedImprovementTimeout, "solver-unplaced-improvement-timeout", cfg.SolverUnplacedImprovementTimeout, "the same while the placement leaves a pod without a node that the solver has not ruled out (0: 100ms; negative: off)")
	fs.Int64Var(&c.SolverGapLimit, "solver-gap-limit", cfg.SolverGapLimit, "end a placement solve once it is proven within this many objective units of the best (0: 50; negative: off)")
	fs.DurationVar(&c.PreemptionImprovementTimeout, "preemption-improvement-timeout", cfg.PreemptionImprovementTimeout, "end a preemption plan's solve once it has not improved for this long (0: 50ms; negative: run to --solver-timeout)")
	fs.DurationVar(&c.PreemptionUnplacedImprovementTimeout, "preemption-unplaced-improvement-timeout", cfg.PreemptionUnplacedImprovementTimeout, "the same while a plan leaves a preemptor without a node that the solver has not ruled out (0: 500ms; negative: off)")
	fs.IntVar(&c.NodeSample, "node-sample", cfg.NodeSample, "most nodes a placement batch considers on a larger cluster (0: kube-scheduler's adaptive share, 230 of 500 nodes, at most 100 a pod of the batch; negative: every node)")
	fs.DurationVar(&c.GangReserveAfter, "gang-reserve-after", cfg.GangReserveAfter, "a PodGroup waiting this long holds back the later pods and groups of its priority or lower until it runs (0: off)")
	fs.IntVar(&c.BindWorkers, "bind-workers", cfg.BindWorkers, "parallel bindings")
	fs.DurationVar(&c.InitialBackoff, "initial-backoff", cfg.InitialBackoff, "first retry delay of an unschedulable pod")
	fs.DurationVar(&c.MaxBackoff, "max-backoff", cfg.MaxBackoff, "longest retry delay")
	fs.BoolVar(&c.LeaderElect, "leader-elect", cfg.LeaderElect, "elect a leader through a Lease before scheduling")
	fs.StringVar(&c.LeaseNamespace, "leader-elect-resource-namespace", cfg.LeaseNamespace, "namespace of the Lease")
	fs.StringVar(&c.LeaseName, "leader-elect-resource-name", cfg.LeaseName, "name of the Lease")
	fs.StringVar(&c.Identity, "leader-elect-identity", cfg.Identity, "this replica's identity in the Lease")
	fs.DurationVar(&c.LeaseDuration, "leader-elect-lease-duration", cfg.LeaseDuration, "lease duration")
	fs.DurationVar(&c.RenewDeadline, "leader-elect-renew-deadline", cfg.RenewDeadline, "renew deadline")
	fs.DurationVar(&c.RetryPeriod, "leader-elect-retry-period", cfg.RetryPeriod, "retry period")
	// kube-scheduler's serving flags are pflag flags (k8s.io/apiserver); they set cfg.Serving directly.
	serving := pflag.NewFlagSet("serving", pflag.ContinueOnError)
	cfg.Serving.AddFlags(serving)
	serving.VisitAll(func(f *pflag.Flag) { fs.Var(stdFlag(f.Value), f.Name, f.Usage) })
	var qps float64
	fs.Float64Var(&qps, "kube-api-qps", float64(cfg.QPS), "API client QPS")
	fs.IntVar(&c.Burst, "kube-api-burst", cfg.Burst, "API client burst")
	fs.StringVar(&c.LogFormat, "log-format", cfg.LogFormat, "text or json")
	fs.StringVar(&c.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn or error")
	fs.BoolVar(&c.Verify, "verify", cfg.Verify, "re-check every solution in the database")
	fs.StringVar(&c.StateDB, "state-db", cfg.StateDB, "PostgreSQL URL of the state database, postgres://user@host:5432/db (empty: in-memory SQLite)")
	fs.StringVar(&c.StateSchema, "state-schema", cfg.StateSchema, "prefix of the replicas' schemas in --state-db (each claims PREFIX_0, PREFIX_1, ...)")
	fs.BoolVar(&c.DisablePreemption, "disable-preemption", cfg.DisablePreemption, "never evict pods to place others")
	fs.DurationVar(&c.NominationTimeout, "nomination-timeout", cfg.NominationTimeout, "how long a preemptor waits for its victims to be gone")
	var disabled string
	fs.StringVar(&disabled, "disable-policies", "", "comma-separated policy IDs to leave out, e.g. S9,N1 (replaces the file's disabledPolicies)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	c.QPS = float32(qps)
	if *file != "" {
		data, err := os.ReadFile(*file)
		if err != nil {
			return cfg, err
		}
		if err := decodeFile(data, &cfg); err != nil {
			return cfg, fmt.Errorf("%s: %w", *file, err)
		}
	}
	// Flags given explicitly override the file.
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "kubeconfig":
			cfg.Kubeconfig = c.Kubeconfig
		case "scheduler-name":
			cfg.SchedulerName = c.SchedulerName
		case "batch-size":
			cfg.BatchSize = c.BatchSize
		case "batch-wait":
			cfg.BatchWait = c.BatchWait
		case "burst-linger":
			cfg.BurstLinger = c.BurstLinger
		case "speculate":
			cfg.Speculate = c.Speculate
		case "solver-timeout":
			cfg.SolverTimeout = c.SolverTimeout
		case "solver-improvement-timeout":
			cfg.SolverImprovementTimeout = c.SolverImprovementTimeout
		case "solver-unplaced-improvement-timeout":
			cfg.SolverUnplacedImprovementTimeout = c.SolverUnplacedImprovementTimeout
		case "solver-gap-limit":
			cfg.SolverGapLimit = c.SolverGapLimit
		case "preemption-improvement-timeout":
			cfg.PreemptionImprovementTimeout = c.PreemptionImprovementTimeout
		case "preemption-unplaced-improvement-timeout":
			cfg.PreemptionUnplacedImprovementTimeout = c.PreemptionUnplacedImprovementTimeout
		case "node-sample":
			cfg.NodeSample = c.NodeSample
		case "gang-reserve-after":
			cfg.GangReserveAfter = c.GangReserveAfter
		case "bind-workers":
			cfg.BindWorkers = c.BindWorkers
		case "initial-backoff":
			cfg.InitialBackoff = c.InitialBackoff
		case "max-backoff":
			cfg.MaxBackoff = c.MaxBackoff
		case "leader-elect":
			cfg.LeaderElect = c.LeaderElect
		case "leader-elect-resource-namespace":
			cfg.LeaseNamespace = c.LeaseNamespace
		case "leader-elect-resource-name":
			cfg.LeaseName = c.LeaseName
		case "leader-elect-identity":
			cfg.Identity = c.Identity
		case "leader-elect-lease-duration":
			cfg.LeaseDuration = c.LeaseDuration
		case "leader-elect-renew-deadline":
			cfg.RenewDeadline = c.RenewDeadline
		case "leader-elect-retry-period":
			cfg.RetryPeriod = c.RetryPeriod
		case "kube-api-qps":
			cfg.QPS = c.QPS
		case "kube-api-burst":
			cfg.Burst = c.Burst
		case "log-format":
			cfg.LogFormat = c.LogFormat
		case "log-level":
			cfg.LogLevel = c.LogLevel
		case "verify":
			cfg.Verify = c.Verify
		case "state-db":
			cfg.StateDB = c.StateDB
		case "state-schema":
			cfg.StateSchema = c.StateSchema
		case "disable-preemption":
			cfg.DisablePreemption = c.DisablePreemption
		case "nomination-timeout":
			cfg.NominationTimeout = c.NominationTimeout
		case "disable-policies":
			cfg.DisabledPolicies = nil
			for _, id := range strings.Split(disabled, ",") {
				if id = strings.TrimSpace(id); id != "" {
					cfg.DisabledPolicies = append(cfg.DisabledPolicies, id)
				}
			}
		}
	})
	if cfg.BatchSize <= 0 || cfg.BindWorkers <= 0 || cfg.NominationTimeout <= 0 {
		return cfg, fmt.Errorf("batch-size, bind-workers and nomination-timeout must be positive")
	}
	if err := scheduler.CheckDisabled(cfg.DisabledPolicies); err != nil {
		return cfg, err
	}
	if err := checkStateDB(cfg); err != nil {
		return cfg, err
	}
	if err := cfg.Serving.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// decodeFile reads a YAML or JSON configuration; durations are written as Go durations ("200ms", "2s").
func decodeFile(data []byte, cfg *Config) error {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil {
		return err
	}
	if _, ok := m["bindAddress"]; ok {
		return errRemovedBindAddress
	}
	for k, v := range m {
		if str, ok := v.(string); ok && durationField[k] {
			d, err := time.ParseDuration(str)
			if err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			m[k] = int64(d)
		}
	}
	js, _ = json.Marshal(m)
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(cfg)
}

// pflagValue is a pflag.Value as a flag.Value. Its zero value prints as "": the flag package's usage
// message calls String on a zero value of each flag's type, which for pflag's own types panics.
type pflagValue struct{ pflag.Value }

func (v *pflagValue) String() string {
	if v == nil || v.Value == nil {
		return ""
	}
	return v.Value.String()
}

// pflagBool is a pflag bool flag, which the flag package takes without an argument (--authentication-skip-lookup).
type pflagBool struct{ pflagValue }

func (*pflagBool) IsBoolFlag() bool { return true }

func (v *pflagBool) String() string {
	if v == nil || v.Value == nil {
		return "false"
	}
	return v.Value.String()
}

func stdFlag(v pflag.Value) flag.Value {
	if v.Type() == "bool" {
		return &pflagBool{pflagValue{v}}
	}
	return &pflagValue{v}
}

// errRemovedBindAddress answers a file of an earlier version, whose bindAddress (":10351") served plain HTTP.
var errRemovedBindAddress = errors.New("bindAddress: weave-scheduler no longer serves plain HTTP; it serves HTTPS with " +
	"delegated authentication and authorization on --secure-port (10259) of --bind-address (an IP), flags as kube-scheduler's (docs/scheduler.md)")

// durationField holds the file keys of Config's time.Duration fields, which a file gives as Go durations
// ("300ms"). Derived from the struct: a hand-kept list missed a field added later.
var durationField = func() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(Config{})
	for i := range t.NumField() {
		if f := t.Field(i); f.Type == reflect.TypeOf(time.Duration(0)) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out[name] = true
		}
	}
	return out
}()
