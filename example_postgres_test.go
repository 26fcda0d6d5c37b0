package weave_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL driver, registered as "pgx"

	"github.com/weavesql/weave"
)

// The state can live in PostgreSQL: open the database with pgx's
// database/sql driver, and Connect, Solve, verification and explanations
// work as they do on SQLite. LoadRows appends rows with COPY there. The
// example is compiled, not run: it needs a server.
func Example_postgres() {
	ctx := context.Background()
	db, err := sql.Open("pgx", "postgres://weave@db.example:5432/cluster?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	m, err := weave.Compile(examplePolicy)
	if err != nil {
		log.Fatal(err)
	}
	// The policy's tables are there already (psql -f policy.sql); in an
	// empty database m.CreateSchema makes them.
	nodes := [][]any{{"n1", 4, false}, {"n2", 6, false}}
	if err := weave.LoadRows(ctx, db, "node", []string{"name", "cpu", "cordoned"}, nodes); err != nil {
		log.Fatal(err)
	}
	if err := m.Connect(db); err != nil {
		log.Fatal(err)
	}
	res, err := m.Solve(ctx, weave.SolveOptions{Timeout: time.Second, Verify: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status)
}
