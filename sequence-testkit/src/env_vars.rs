//! The environment variables that choose the server and the `mongod` to run.

/// Environment variable naming an existing deployment to use instead of
/// starting one.
pub const MONGODB_URI_ENV: &str = "MONGODB_URI";
/// Environment variable naming the `mongod` executable to run.
pub const MONGOD_BINARY_ENV: &str = "MONGOD_BINARY";
/// Environment variable overriding the directory a downloaded `mongod` is
/// cached in.
pub const CACHE_DIR_ENV: &str = "MONGO_SEQUENCE_CACHE";
