-- The store-bound endpoints' tables, the same on SQLite and PostgreSQL. Servers run this
-- at start-up (it is idempotent) and then seed the rows that are missing; see seed.rs.

-- TechEmpower's table: ids 1..=10000, randomNumber 1..=10000.
CREATE TABLE IF NOT EXISTS world (
    id INTEGER PRIMARY KEY,
    randomnumber INTEGER NOT NULL
);

-- The known people of /business: user-00001 ... user-10000, each with a greeting word.
CREATE TABLE IF NOT EXISTS person (
    name TEXT PRIMARY KEY,
    word TEXT NOT NULL
);

-- TechEmpower's fortunes: the twelve rows of their table, seeded as theirs.
CREATE TABLE IF NOT EXISTS fortune (
    id INTEGER PRIMARY KEY,
    message TEXT NOT NULL
);
