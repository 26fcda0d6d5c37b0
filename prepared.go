package weave

import (
	"context"
	"database/sql"

	"github.com/weavesql/weave/internal/ground"
)

// preparedReads holds the snapshot's statements prepared on the database
// before the first read after Connect. A scheduling loop reads the same
// relations batch after batch; parsing their SQL again each time cost
// SQLite about 10 ms of CPU per 500-node batch.
//
// They are prepared on the *sql.DB, not on a transaction, so that they
// outlive it: each read transaction binds them with Tx.StmtContext, which
// reuses the statement already prepared on the transaction's connection
// (and prepares it there once if the pool hands out another connection).
// They are prepared all at once before the first read transaction begins
// (startFetch), not one by one as the reads first meet them: with a pool
// of one connection (SQLite in memory) that connection is the read
// transaction's, and preparing during it would wait for it forever. Not at
// Connect: a model that is connected and never solved (a scheduler's
// preemption model until it first preempts) then never prepares them, and
// preparing them was about a sixth of starting a scheduler.
//
// They are prepared for every driver but pgx. SQLite prepares a statement
// again by itself when the schema changes; pgx already keeps a statement
// cache per connection and drops a statement whose plan no longer fits (a
// view redefined with other column types), where a *sql.Stmt would fail
// on it until the next Connect.
type preparedReads map[string]*sql.Stmt

// prepareReads prepares every statement the model's snapshot is read
// with. A statement the database refuses to prepare is left out and runs
// unprepared, so the read reports the database's error where it happens.
func prepareReads(ctx context.Context, db *sql.DB, queries []string) preparedReads {
	if dialectOf(db) != dialectSQLite {
		return nil
	}
	p := make(preparedReads, len(queries))
	for _, q := range queries {
		if st, err := db.PrepareContext(ctx, q); err == nil {
			p[q] = st
		}
	}
	return p
}

// close releases the statements (a model connected again, to another
// database or the same one).
func (p preparedReads) close() {
	for _, st := range p {
		st.Close()
	}
}

// in returns a ground.Querier reading through tx with the prepared
// statements.
func (p preparedReads) in(tx *sql.Tx) ground.Querier { return preparedTx{tx, p} }

type preparedTx struct {
	tx *sql.Tx
	p  preparedReads
}

// QueryContext runs query in the transaction, prepared if it was at
// Connect. The transaction's copy of the statement is closed with it.
func (t preparedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st, ok := t.p[query]; ok {
		return t.tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}
