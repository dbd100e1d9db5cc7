/**
 * Round trips this process has made to PostgreSQL: every statement any of its pools sends (a
 * statement, BEGIN and COMMIT are one each; pg sends a prepared statement's bind and execute in
 * one write). Read by /metrics as `gateway_database_round_trips_total`, which the benchmark divides
 * by the requests answered (docs/performance.md, "The scale-out path"). A module of its own, without
 * the driver, so that an embedded gateway reads it without loading pg; it stays 0 there.
 */
export const databaseRoundTrips = { count: 0 };
