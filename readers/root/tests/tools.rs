//! root-tool integration tests (filled below).
