package consume

import (
	"context"
	"log/slog"
	"strings"

	"github.com/brightergo/brighter/internal/config"
	"github.com/brightergo/brighter/internal/lint"
	"github.com/brightergo/brighter/internal/lint/rules"
)

// logLintFinding is the stable text of the start-up log of a lint finding.
const logLintFinding = "subscription configuration will probably not behave as written"

// defaultLintRules returns every transport's lint answers.
func defaultLintRules() map[config.Transport]lint.TransportRules { return rules.Default() }

// logLintFindings runs the lint rules over subs and logs each finding once
// per subscription and rule (NFR-4; R-25's start-up route): a Warning
// finding (the budget rules) at Warn, an Error finding
// at Error, a note at Info. Two findings of one rule on one subscription
// (both routing keys equal to the source, say) share one record, their
// messages joined. Each subscription is judged within file (the
// cross-subscription rules need the others). It returns the Error findings,
// which consume refuses to start with. Nothing here runs per message.
func logLintFindings(ctx context.Context, logger *slog.Logger, transports map[config.Transport]lint.TransportRules, file *config.File, subs []*config.Subscription) (errs []lint.Finding) {
	l := lint.New(transports)
	for _, s := range subs {
		var order []string
		byRule := map[string][]lint.Finding{}
		for _, f := range l.SubscriptionIn(file, s) {
			if f.Severity == lint.SeverityError {
				errs = append(errs, f)
			}
			if _, ok := byRule[f.RuleID]; !ok {
				order = append(order, f.RuleID)
			}
			byRule[f.RuleID] = append(byRule[f.RuleID], f)
		}
		for _, id := range order {
			fs := byRule[id]
			f := fs[0]
			msgs := make([]string, len(fs))
			for i, x := range fs {
				msgs[i] = x.Message
			}
			level := slog.LevelInfo
			switch f.Severity {
			case lint.SeverityError:
				level = slog.LevelError
			case lint.SeverityWarning:
				level = slog.LevelWarn
			}
			attrs := []any{"subscription", s.Name, "rule", f.RuleID}
			if f.Requirement != "" {
				attrs = append(attrs, "requirement", f.Requirement)
			}
			attrs = append(attrs, "position", f.Pos.String(), "field", f.Field, "finding", strings.Join(msgs, "; "))
			logger.Log(ctx, level, logLintFinding, attrs...)
		}
	}
	return errs
}
