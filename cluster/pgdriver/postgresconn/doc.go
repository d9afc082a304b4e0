// Package postgresconn turns an operator's description of a PostgreSQL
// database, given by a command-line flag and the environment, into a pgx
// pool for the Postgres driver (package pgdriver): the counterpart of
// package redisconn for Redis. stpectl and the dashboard's binary use
// both, so that each tool reads the same flags and variables the same
// way.
//
// # Address
//
// Config.URL (the -postgres flag) is a PostgreSQL URL, as libpq and pgx
// read it:
//
//	postgres://[user[:password]@]host[:port]/database[?param=value&...]
//	postgresql://...                   the same
//
// with libpq's parameters (sslmode, search_path through options,
// connect_timeout, application_name...). The store's tables (stpe_*) are
// those of the database, in the schema the connection's search_path
// finds first: a database (or a schema) is what a Redis key prefix is to
// the Redis driver. The keyword form (host=... dbname=...) is refused:
// one form is easier to say, check and redact.
//
// # Environment
//
// FromEnv reads STPE_POSTGRES_URL, the URL when no flag gives one. There
// is no default: without a URL, a tool uses Redis. DATABASE_URL is not
// read, because it commonly names an application's own database, and
// reading it would move a tool to Postgres unasked.
//
// The password may stay out of the URL: pgx, like libpq, takes it from
// PGPASSWORD or the password file (~/.pgpass, or PGPASSFILE) when the URL
// has none, and reads the other PG* variables for what the URL leaves
// out.
//
// # Secrets
//
// Config.String is the URL without its user information and password
// parameters (redisconn.Redact, which covers every scheme), fit to print;
// the errors of Open are redacted the same way.
package postgresconn
