package zzperf

import (
	"database/sql"
	"testing"

	_ "modernc.org/sqlite"
)

func memoryDB(t testing.TB) *sql.DB {
	db, _ := sql.Open("sqlite", ":memory:")
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}
