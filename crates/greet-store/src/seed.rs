//! The one schema file, for SQLite (when the database is made) and PostgreSQL (at start-up)
//! alike. The rows it is seeded with are a function of their key
//! ([`greet_core::records`]): each database inserts what is missing (`ON CONFLICT DO
//! NOTHING`), so several servers seeding one database at once write the same rows.

/// The tables.
pub const SCHEMA: &str = include_str!("../schema.sql");
