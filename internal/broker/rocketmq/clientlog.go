package rocketmq

import (
	"os"
	"path/filepath"
	"sync"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
)

// Environment variables the RocketMQ Go client reads for its own log
// (log.go of github.com/apache/rocketmq-clients/golang/v5). The client writes
// a rotating file $rocketmq.client.logRoot/rocketmq_client_go.log and, with
// the default root "${user.home}/logs/rocketmqlogs" and user.home unset,
// ends up at /logs/rocketmqlogs at the filesystem root.
const (
	envClientLogRoot  = rmq.CLIENT_LOG_ROOT
	envClientLogLevel = rmq.CLIENT_LOG_LEVEL
)

// clientLog guards the one-time redirection of the client's log. The client
// keeps its logger in a package variable made at init; redirecting it is
// therefore process-wide and done once, before the first client is made,
// so no client goroutine can be logging while the logger is replaced.
var clientLog struct {
	once sync.Once
	dir  string
}

// DefaultClientLogDir is where the client's own log goes unless configured:
// <user cache dir>/brighter/rocketmq (for example
// ~/.cache/brighter/rocketmq), or <temp dir>/brighter-rocketmq when there is
// no user cache dir.
func DefaultClientLogDir() string {
	if d, err := os.UserCacheDir(); err == nil && d != "" {
		return filepath.Join(d, "brighter", "rocketmq")
	}
	return filepath.Join(os.TempDir(), "brighter-rocketmq")
}

// ConfigureClientLog sends the RocketMQ client's log file to dir ("" means
// DefaultClientLogDir) and keeps it out of the user's output. It acts once
// per process; later calls return the directory chosen first. An explicit
// rocketmq.client.logRoot in the environment wins, as does
// rocketmq.client.logLevel (default here: warn, so the file holds problems,
// not chatter). Every constructor of this package calls it.
func ConfigureClientLog(dir string) string {
	clientLog.once.Do(func() {
		if root, ok := os.LookupEnv(envClientLogRoot); ok && root != "" {
			clientLog.dir = root
		} else {
			if dir == "" {
				dir = DefaultClientLogDir()
			}
			clientLog.dir = dir
			_ = os.Setenv(envClientLogRoot, dir)
		}
		if _, ok := os.LookupEnv(envClientLogLevel); !ok {
			_ = os.Setenv(envClientLogLevel, "warn")
		}
		_ = os.MkdirAll(clientLog.dir, 0o755)
		rmq.ResetLogger()
	})
	return clientLog.dir
}
